package get

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

const day = 24 * time.Hour

// lines joins rows into the text a table prints.
func lines(rows ...string) string { return strings.Join(rows, "\n") + "\n" }

func TestPrintClusters(t *testing.T) {
	h100 := usagev1alpha1.ResourceFigures{Name: "nvidia.com/gpu", Model: "NVIDIA-H100-80GB-HBM3", Free: resource.MustParse("12"),
		FreeNodes: []usagev1alpha1.NodesWithFree{{Free: resource.MustParse("8"), Nodes: 1}, {Free: resource.MustParse("4"), Nodes: 2}}}
	full := usagev1alpha1.ResourceFigures{Name: "nvidia.com/gpu", Model: "NVIDIA-L4", Free: resource.MustParse("0")}
	usage := func(cluster string, validFor time.Duration, figures ...usagev1alpha1.ResourceFigures) usagev1alpha1.ResourceUsage {
		return usagev1alpha1.ResourceUsage{
			ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: usagev1alpha1.ResourceUsageName},
			Status: usagev1alpha1.ResourceUsageStatus{ObservedTime: &metav1.Time{Time: now.Add(-time.Minute)},
				ValidUntil: &metav1.Time{Time: now.Add(validFor)}, Resources: figures},
		}
	}
	cases := map[string]struct {
		clusters []*clusterv1.ManagedCluster
		usages   []usagev1alpha1.ResourceUsage
		want     string
	}{
		"a fleet in every state": {
			clusters: []*clusterv1.ManagedCluster{
				makeCluster("gpu-east", 2*day+4*time.Hour).Accepted().Condition(healthy()...).
					Allocatable(clusterv1.ResourceNvidiaGPU, "16").GPUClaim("NVIDIA-A100-SXM4-80GB", "16").Obj(),
				makeCluster("gpu-west", 3*time.Minute).Accepted().Condition(healthy()...).
					GPUClaim("NVIDIA-L4", "4").GPUClaim("NVIDIA-H100-80GB-HBM3", "8").Obj(),
				// The agent stopped renewing its lease.
				makeCluster("edge-1", 5*time.Second).Accepted().
					Condition(condition(clusterv1.ManagedClusterConditionJoined, metav1.ConditionTrue)).
					Condition(condition(clusterv1.ManagedClusterConditionAvailable, metav1.ConditionUnknown)).Obj(),
				// Asked to join; nobody has accepted it and no claims were copied yet.
				makeCluster("pending-1", 90*day).Allocatable(clusterv1.ResourceNvidiaGPU, "8").Obj(),
				makeCluster("denied", 26*time.Hour).
					Condition(condition(clusterv1.ManagedClusterConditionJoined, metav1.ConditionFalse)).
					Condition(condition(clusterv1.ManagedClusterConditionAvailable, metav1.ConditionFalse)).Obj(),
			},
			// Free GPUs come from the clusters' ResourceUsages (the resource-usage add-on).
			usages: []usagev1alpha1.ResourceUsage{
				usage("gpu-west", time.Minute, h100, full),
				usage("gpu-east", -time.Second),
				usage("edge-1", time.Minute),
			},
			want: lines(
				"NAME        ACCEPTED   JOINED    AVAILABLE   GPUS                                   FREE-GPUS                                               AGE",
				"gpu-east    true       True      True        16 NVIDIA-A100-SXM4-80GB               expired                                                 2d4h",
				"gpu-west    true       True      True        8 NVIDIA-H100-80GB-HBM3, 4 NVIDIA-L4   12 NVIDIA-H100-80GB-HBM3 (8 on one node), 0 NVIDIA-L4   3m",
				"edge-1      true       True      Unknown     -                                      -                                                       5s",
				"pending-1   false      Unknown   Unknown     8                                      -                                                       90d",
				"denied      false      False     False       -                                      -                                                       26h",
			),
		},
		"no clusters prints the header": {
			want: lines("NAME   ACCEPTED   JOINED   AVAILABLE   GPUS   FREE-GPUS   AGE"),
		},
		"no creation time": {
			clusters: []*clusterv1.ManagedCluster{{ObjectMeta: metav1.ObjectMeta{Name: "odd"}}},
			want: lines(
				"NAME   ACCEPTED   JOINED    AVAILABLE   GPUS   FREE-GPUS   AGE",
				"odd    false      Unknown   Unknown     -      -           <unknown>",
			),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			list := &clusterv1.ManagedClusterList{}
			for _, c := range tc.clusters {
				list.Items = append(list.Items, *c)
			}
			var out bytes.Buffer
			usages := &usagev1alpha1.ResourceUsageList{Items: tc.usages}
			if err := printClusters(&out, list, usages, clocktesting.NewFakePassiveClock(now)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("printClusters (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrintClusterSets(t *testing.T) {
	cases := map[string]struct {
		sets []*clusterv1beta2.ManagedClusterSet
		want string
	}{
		"exclusive and label selectors": {
			sets: []*clusterv1beta2.ManagedClusterSet{
				makeSet("a100", 7*time.Minute).LabelSelector(&metav1.LabelSelector{
					MatchLabels: map[string]string{"gpu.flotilla.io/model": "A100"},
					MatchExpressions: []metav1.LabelSelectorRequirement{
						{Key: "region", Operator: metav1.LabelSelectorOpIn, Values: []string{"us-west", "us-east"}},
					},
				}).Condition(empty(metav1.ConditionFalse)).Obj(),
				makeSet("default", 400*day).Condition(empty(metav1.ConditionTrue)).Obj(),
				// OCM's global set selects every cluster with an empty selector.
				makeSet("global", 400*day).LabelSelector(&metav1.LabelSelector{}).Condition(empty(metav1.ConditionFalse)).Obj(),
				makeSet("training", 45*time.Second).Obj(),
			},
			want: lines(
				"NAME       SELECTOR                                                 EMPTY     AGE",
				"a100       gpu.flotilla.io/model=A100,region in (us-east,us-west)   False     7m",
				"default    ExclusiveClusterSetLabel                                 True      400d",
				"global     <all>                                                    False     400d",
				"training   ExclusiveClusterSetLabel                                 Unknown   45s",
			),
		},
		"selector type left to the API server's default": {
			sets: []*clusterv1beta2.ManagedClusterSet{
				{ObjectMeta: metav1.ObjectMeta{Name: "old", CreationTimestamp: ago(3 * 365 * day)}},
			},
			want: lines(
				"NAME   SELECTOR                   EMPTY     AGE",
				"old    ExclusiveClusterSetLabel   Unknown   3y",
			),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			list := &clusterv1beta2.ManagedClusterSetList{}
			for _, s := range tc.sets {
				list.Items = append(list.Items, *s)
			}
			var out bytes.Buffer
			if err := printClusterSets(&out, list, clocktesting.NewFakePassiveClock(now)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("printClusterSets (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrintBindings(t *testing.T) {
	bindings := []*clusterv1beta2.ManagedClusterSetBinding{
		makeBinding("research", "a100", 2*time.Hour+30*time.Minute).Condition(bound(metav1.ConditionTrue)).Obj(),
		makeBinding("research", "global", 10*day).Condition(bound(metav1.ConditionTrue)).Obj(),
		makeBinding("team-inference", "gone", 12*time.Second).Condition(bound(metav1.ConditionFalse)).Obj(),
		makeBinding("team-inference", "new", time.Second).Obj(),
	}
	cases := map[string]struct {
		allNamespaces bool
		want          string
	}{
		"one namespace": {
			want: lines(
				"NAME     CLUSTERSET   BOUND     AGE",
				"a100     a100         True      150m",
				"global   global       True      10d",
				"gone     gone         False     12s",
				"new      new          Unknown   1s",
			),
		},
		"all namespaces": {
			allNamespaces: true,
			want: lines(
				"NAMESPACE        NAME     CLUSTERSET   BOUND     AGE",
				"research         a100     a100         True      150m",
				"research         global   global       True      10d",
				"team-inference   gone     gone         False     12s",
				"team-inference   new      new          Unknown   1s",
			),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			list := &clusterv1beta2.ManagedClusterSetBindingList{}
			for _, b := range bindings {
				list.Items = append(list.Items, *b)
			}
			var out bytes.Buffer
			if err := printBindings(&out, list, clocktesting.NewFakePassiveClock(now), tc.allNamespaces); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("printBindings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSelector(t *testing.T) {
	cases := map[string]struct {
		sel  clusterv1beta2.ManagedClusterSelector
		want string
	}{
		"exclusive":         {sel: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel}, want: "ExclusiveClusterSetLabel"},
		"empty type":        {want: "ExclusiveClusterSetLabel"},
		"match labels":      {sel: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"b": "2", "a": "1"}}}, want: "a=1,b=2"},
		"empty selects all": {sel: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector, LabelSelector: &metav1.LabelSelector{}}, want: "<all>"},
		"no selector":       {sel: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector}, want: "<none>"},
		"invalid selector": {
			sel: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector, LabelSelector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}},
			}},
			want: "<invalid>",
		},
		"type from a newer API": {sel: clusterv1beta2.ManagedClusterSelector{SelectorType: "PlacementSelector"}, want: "PlacementSelector"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, selector(tc.sel)); diff != "" {
				t.Errorf("selector (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrintObjects(t *testing.T) {
	b := makeBinding("research", "a100", time.Hour).Condition(bound(metav1.ConditionTrue)).Obj()
	b.ResourceVersion = "42"
	b.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "flotilla-hub", Operation: metav1.ManagedFieldsOperationUpdate}}
	list := &clusterv1beta2.ManagedClusterSetBindingList{Items: []clusterv1beta2.ManagedClusterSetBinding{*b}}
	cases := map[string]struct {
		list   runtime.Object
		format string
		want   string
	}{
		"yaml": {
			list:   list,
			format: "yaml",
			want: lines(
				"apiVersion: v1",
				"items:",
				"- apiVersion: cluster.open-cluster-management.io/v1beta2",
				"  kind: ManagedClusterSetBinding",
				"  metadata:",
				`    creationTimestamp: "2026-07-01T11:00:00Z"`,
				"    name: a100",
				"    namespace: research",
				`    resourceVersion: "42"`,
				"  spec:",
				"    clusterSet: a100",
				"  status:",
				"    conditions:",
				`    - lastTransitionTime: "2026-07-01T11:59:00Z"`,
				`      message: ""`,
				"      reason: Test",
				`      status: "True"`,
				"      type: Bound",
				"kind: List",
				"metadata: {}",
			),
		},
		"json": {
			list:   list,
			format: "json",
			want: lines(
				"{",
				`    "kind": "List",`,
				`    "apiVersion": "v1",`,
				`    "metadata": {},`,
				`    "items": [`,
				"        {",
				`            "kind": "ManagedClusterSetBinding",`,
				`            "apiVersion": "cluster.open-cluster-management.io/v1beta2",`,
				`            "metadata": {`,
				`                "name": "a100",`,
				`                "namespace": "research",`,
				`                "resourceVersion": "42",`,
				`                "creationTimestamp": "2026-07-01T11:00:00Z"`,
				"            },",
				`            "spec": {`,
				`                "clusterSet": "a100"`,
				"            },",
				`            "status": {`,
				`                "conditions": [`,
				"                    {",
				`                        "type": "Bound",`,
				`                        "status": "True",`,
				`                        "lastTransitionTime": "2026-07-01T11:59:00Z",`,
				`                        "reason": "Test",`,
				`                        "message": ""`,
				"                    }",
				"                ]",
				"            }",
				"        }",
				"    ]",
				"}",
			),
		},
		"empty json": {
			list:   &clusterv1.ManagedClusterList{},
			format: "json",
			want:   lines("{", `    "kind": "List",`, `    "apiVersion": "v1",`, `    "metadata": {},`, `    "items": []`, "}"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := printObjects(&out, tc.list, tc.format); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("printObjects (-want +got):\n%s", diff)
			}
		})
	}
	if got := list.Items[0]; got.Kind != "" || got.ManagedFields == nil {
		t.Errorf("printObjects changed the list it printed: kind %q, managedFields %v", got.Kind, got.ManagedFields)
	}
}
