package get

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
)

type placementWrapper struct{ clusterv1beta1.Placement }

func makePlacement(namespace, name string, age time.Duration) *placementWrapper {
	return &placementWrapper{clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, CreationTimestamp: ago(age)}}}
}

func (w *placementWrapper) selected(n int32, groups ...clusterv1beta1.DecisionGroupStatus) *placementWrapper {
	w.Status.NumberOfSelectedClusters = n
	w.Status.DecisionGroups = groups
	return w
}

func (w *placementWrapper) condition(typ string, s metav1.ConditionStatus, reason string) *placementWrapper {
	c := condition(typ, s)
	c.Reason = reason
	w.Status.Conditions = append(w.Status.Conditions, c)
	return w
}

func (w *placementWrapper) obj() *clusterv1beta1.Placement { return &w.Placement }

func group(index int32, name string, count int32) clusterv1beta1.DecisionGroupStatus {
	return clusterv1beta1.DecisionGroupStatus{DecisionGroupIndex: index, DecisionGroupName: name, ClusterCount: count}
}

// placements are a satisfied grouped placement, one that matched nothing, a misconfigured one and
// one the scheduler has not seen yet.
func placements() []client.Object {
	return []client.Object{
		makePlacement(contextNamespace, "train", 2*day).selected(5, group(0, "canary", 1), group(1, "", 4)).
			condition(clusterv1beta1.PlacementConditionSatisfied, metav1.ConditionTrue, clusterv1beta1.PlacementReasonAllDecisionsScheduled).
			condition(clusterv1beta1.PlacementConditionMisconfigured, metav1.ConditionFalse, clusterv1beta1.PlacementReasonSucceedConfigured).obj(),
		makePlacement(contextNamespace, "h100", time.Hour).selected(0, group(0, "", 0)).
			condition(clusterv1beta1.PlacementConditionSatisfied, metav1.ConditionFalse, clusterv1beta1.PlacementReasonNoManagedClusterMatched).
			condition(clusterv1beta1.PlacementConditionMisconfigured, metav1.ConditionFalse, clusterv1beta1.PlacementReasonSucceedConfigured).obj(),
		makePlacement("team-inference", "bad-cel", 3*time.Minute).
			condition(clusterv1beta1.PlacementConditionSatisfied, metav1.ConditionFalse, clusterv1beta1.PlacementReasonNoManagedClusterMatched).
			condition(clusterv1beta1.PlacementConditionMisconfigured, metav1.ConditionTrue, clusterv1beta1.PlacementReasonMisconfigured).obj(),
		makePlacement("team-inference", "new", 5*time.Second).obj(),
	}
}

func TestGetPlacements(t *testing.T) {
	cases := map[string]struct {
		args       []string
		wantOut    string
		wantErrOut string
	}{
		"in the kubeconfig's namespace": {
			args: []string{"placements"},
			wantOut: lines(
				"NAME    SELECTED   GROUPS            SATISFIED   MISCONFIGURED   REASON                    AGE",
				"h100    0          0:0               False       False           NoManagedClusterMatched   60m",
				"train   5          0 canary:1, 1:4   True        False           AllDecisionsScheduled     2d",
			),
		},
		"in every namespace, singular name": {
			args: []string{"Placement", "-A"},
			wantOut: lines(
				"NAMESPACE        NAME      SELECTED   GROUPS            SATISFIED   MISCONFIGURED   REASON                    AGE",
				"research         h100      0          0:0               False       False           NoManagedClusterMatched   60m",
				"research         train     5          0 canary:1, 1:4   True        False           AllDecisionsScheduled     2d",
				"team-inference   bad-cel   0          -                 False       True            Misconfigured             3m",
				"team-inference   new       0          -                 Unknown     Unknown         -                         5s",
			),
		},
		"none in a namespace": {
			args:       []string{"placements", "-n", "nobody"},
			wantErrOut: "No resources found in nobody namespace.\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			newClient, _ := fakeHub(interceptor.Funcs{}, placements()...)
			out, errOut, err := runGet(newClient, tc.args...)
			if err != nil {
				t.Fatalf("get %v: %v", tc.args, err)
			}
			if diff := cmp.Diff(tc.wantOut, out); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantErrOut, errOut); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGetPlacementsAsYAML(t *testing.T) {
	newClient, _ := fakeHub(interceptor.Funcs{}, placements()...)
	out, _, err := runGet(newClient, "placements", "-n", "team-inference", "-o", "yaml")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	var list struct {
		Items []clusterv1beta1.Placement `json:"items"`
	}
	if err := yaml.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("reading %s: %v", out, err)
	}
	var got []string
	for _, p := range list.Items {
		got = append(got, p.APIVersion+" "+p.Kind+" "+p.Namespace+"/"+p.Name)
	}
	want := []string{
		"cluster.open-cluster-management.io/v1beta1 Placement team-inference/bad-cel",
		"cluster.open-cluster-management.io/v1beta1 Placement team-inference/new",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("printed placements (-want +got):\n%s", diff)
	}
}
