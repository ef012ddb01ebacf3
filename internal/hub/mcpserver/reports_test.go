package mcpserver

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/hub/workreplicaset"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

func cond(typ string, s metav1.ConditionStatus, reason, msg string, since time.Duration) metav1.Condition {
	return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: msg, LastTransitionTime: ago(since)}
}

func gpuClaims(counts ...string) []clusterv1.ManagedClusterClaim {
	var models string
	var out []clusterv1.ManagedClusterClaim
	for i := 0; i+1 < len(counts); i += 2 {
		if models != "" {
			models += ","
		}
		models += counts[i]
		out = append(out, clusterv1.ManagedClusterClaim{Name: clusterv1.GPUCountClaimName(counts[i]), Value: counts[i+1]})
	}
	return append(out, clusterv1.ManagedClusterClaim{Name: clusterv1.GPUModelsClaim, Value: models})
}

func TestClusterReports(t *testing.T) {
	east := clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "east", Labels: map[string]string{clusterv1beta2.ClusterSetLabel: "gpus", "region": "us-east"}},
		Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true, LeaseDurationSeconds: 30, Taints: []clusterv1.Taint{
			{Key: "gpu.flotilla.io/maintenance", Value: "yes", Effect: clusterv1.TaintEffectNoSelect, TimeAdded: ptr.To(ago(90 * time.Second))}}},
		Status: clusterv1.ManagedClusterStatus{
			Conditions: []metav1.Condition{
				cond(clusterv1.ManagedClusterConditionJoined, metav1.ConditionTrue, "Joined", "", time.Hour),
				cond(clusterv1.ManagedClusterConditionAvailable, metav1.ConditionTrue, "Healthy", "the API server is healthy", 10*time.Minute),
			},
			ClusterClaims: append(gpuClaims("NVIDIA-H100", "32"), clusterv1.ManagedClusterClaim{Name: "region.open-cluster-management.io", Value: "us-east"}),
			Version:       clusterv1.ManagedClusterVersion{Kubernetes: "v1.37.2"},
		},
	}
	lost := clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "lost"},
		Status: clusterv1.ManagedClusterStatus{Conditions: []metav1.Condition{
			cond(clusterv1.ManagedClusterConditionAvailable, metav1.ConditionUnknown, clusterv1.ManagedClusterReasonLeaseUpdateStopped, "lease not renewed", time.Minute)}},
	}
	sets := []clusterv1beta2.ManagedClusterSet{
		{ObjectMeta: metav1.ObjectMeta{Name: "gpus"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "global"}, Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
			SelectorType: clusterv1beta2.LabelSelector, LabelSelector: &metav1.LabelSelector{}}}},
	}
	leases := []coordinationv1.Lease{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "east", Name: clusterv1.ManagedClusterLeaseName}, Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: now.Add(-12 * time.Second)}}},
		// Another lease in the namespace is not the heartbeat.
		{ObjectMeta: metav1.ObjectMeta{Namespace: "lost", Name: "other"}, Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: now}}},
	}
	want := []Cluster{
		{Name: "east", Accepted: true, Joined: "True", Available: "True", AvailableReason: "Healthy", AvailableMessage: "the API server is healthy",
			AvailableForSeconds: ptr.To[int64](600), LeaseRenewedSecondsAgo: ptr.To[int64](12), LeaseDurationSeconds: 30,
			Taints: []Taint{{Key: "gpu.flotilla.io/maintenance", Value: "yes", Effect: "NoSelect", AddedSecondsAgo: ptr.To[int64](90)}},
			Sets:   []string{"global", "gpus"}, Labels: east.Labels,
			Claims: map[string]string{clusterv1.GPUModelsClaim: "NVIDIA-H100", clusterv1.GPUCountClaimName("NVIDIA-H100"): "32", "region.open-cluster-management.io": "us-east"},
			GPUs:   map[string]int64{"NVIDIA-H100": 32}, KubernetesVersion: "v1.37.2"},
		{Name: "lost", Joined: "Unknown", Available: "Unknown", AvailableReason: clusterv1.ManagedClusterReasonLeaseUpdateStopped, AvailableMessage: "lease not renewed",
			AvailableForSeconds: ptr.To[int64](60), LeaseDurationSeconds: clusterv1.DefaultLeaseDurationSeconds,
			Taints: []Taint{}, Sets: []string{"global"}, Labels: map[string]string{}, Claims: map[string]string{}, GPUs: map[string]int64{}},
	}
	got := clusterReports([]clusterv1.ManagedCluster{east, lost}, sets, leases, now)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("clusterReports (-want +got):\n%s", diff)
	}
}

func TestGPUReport(t *testing.T) {
	q := resource.MustParse
	usage := func(cluster string, valid time.Duration, figures ...usagev1alpha1.ResourceFigures) usagev1alpha1.ResourceUsage {
		return usagev1alpha1.ResourceUsage{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: usagev1alpha1.ResourceUsageName},
			Status: usagev1alpha1.ResourceUsageStatus{ObservedTime: ptr.To(ago(time.Minute)), ValidUntil: ptr.To(metav1.NewTime(now.Add(valid))), Resources: figures}}
	}
	h100 := usagev1alpha1.ResourceFigures{Name: usagev1alpha1.ResourceNvidiaGPU, Model: "H100", Capacity: q("32"), Allocatable: q("32"), Requested: q("20"), Free: q("12"),
		LargestNodeAllocatable: q("8"), FreeNodes: []usagev1alpha1.NodesWithFree{{Free: q("8"), Nodes: 1}, {Free: q("4"), Nodes: 2}}}
	a100 := usagev1alpha1.ResourceFigures{Name: usagev1alpha1.ResourceNvidiaGPU, Model: "A100", Capacity: q("16"), Allocatable: q("16"), Free: q("16"),
		LargestNodeAllocatable: q("8"), FreeNodes: []usagev1alpha1.NodesWithFree{{Free: q("8"), Nodes: 2}}}
	clusters := []clusterv1.ManagedCluster{
		{ObjectMeta: metav1.ObjectMeta{Name: "east"}, Status: clusterv1.ManagedClusterStatus{ClusterClaims: gpuClaims("H100", "32"),
			Allocatable: clusterv1.ResourceList{clusterv1.ResourceNvidiaGPU: q("32")}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "west"}, Status: clusterv1.ManagedClusterStatus{ClusterClaims: gpuClaims("A100", "16", "H100", "8"),
			Allocatable: clusterv1.ResourceList{clusterv1.ResourceNvidiaGPU: q("24")}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "cpu"}},
	}
	// west's figures expired: shown, not added up.
	usages := []usagev1alpha1.ResourceUsage{usage("east", time.Minute, h100), usage("west", -time.Second, a100)}
	eastFigures := &Figures{Capacity: 32, Allocatable: 32, Requested: 20, Free: 12, LargestNodeAllocatable: 8, MostFreeOnANode: 8,
		FreeNodes: []FreeNodes{{Free: 8, Nodes: 1}, {Free: 4, Nodes: 2}}}
	westA100 := &Figures{Capacity: 16, Allocatable: 16, Free: 16, LargestNodeAllocatable: 8, MostFreeOnANode: 8, FreeNodes: []FreeNodes{{Free: 8, Nodes: 2}}}
	times := func(c ClusterGPUs) ClusterGPUs {
		c.ObservedTime = now.Add(-time.Minute).Format(time.RFC3339)
		return c
	}
	cases := map[string]struct {
		model string
		all   bool
		want  GPUsOutput
	}{
		"every model": {
			want: GPUsOutput{
				Models: []ModelTotal{
					{Model: "A100", Clusters: 1, Allocatable: 16},
					{Model: "H100", Clusters: 2, Allocatable: 40, Free: 12, MostFreeOnANode: 8, ClustersWithCurrentFigures: 1},
				},
				Clusters: []ClusterGPUs{
					func() ClusterGPUs {
						c := times(ClusterGPUs{Cluster: "east", Available: "Unknown", Allocatable: 32, Usage: "current",
							Models: []ModelGPUs{{Model: "H100", Allocatable: 32, Figures: eastFigures}}})
						c.ValidUntil = now.Add(time.Minute).Format(time.RFC3339)
						return c
					}(),
					func() ClusterGPUs {
						c := times(ClusterGPUs{Cluster: "west", Available: "Unknown", Allocatable: 24, Usage: "expired",
							Models: []ModelGPUs{{Model: "A100", Allocatable: 16, Figures: westA100}, {Model: "H100", Allocatable: 8}}})
						c.ValidUntil = now.Add(-time.Second).Format(time.RFC3339)
						return c
					}(),
				},
				Notes: []string{"1 cluster has no GPUs and is left out"},
			},
		},
		"one model, every cluster": {
			model: "A100", all: true,
			want: GPUsOutput{
				Models: []ModelTotal{{Model: "A100", Clusters: 1, Allocatable: 16}},
				Clusters: []ClusterGPUs{
					{Cluster: "cpu", Available: "Unknown", Usage: "none", Models: []ModelGPUs{}},
					func() ClusterGPUs {
						c := times(ClusterGPUs{Cluster: "east", Available: "Unknown", Allocatable: 32, Usage: "current", Models: []ModelGPUs{}})
						c.ValidUntil = now.Add(time.Minute).Format(time.RFC3339)
						return c
					}(),
					func() ClusterGPUs {
						c := times(ClusterGPUs{Cluster: "west", Available: "Unknown", Allocatable: 24, Usage: "expired",
							Models: []ModelGPUs{{Model: "A100", Allocatable: 16, Figures: westA100}}})
						c.ValidUntil = now.Add(-time.Second).Format(time.RFC3339)
						return c
					}(),
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cs := clusters
			if tc.all {
				cs = []clusterv1.ManagedCluster{clusters[2], clusters[0], clusters[1]}
			}
			got := gpuReport(cs, usages, tc.model, tc.all, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("gpuReport (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlacementReports(t *testing.T) {
	p := func(ns, name string) clusterv1beta1.Placement {
		return clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	train := p("ml", "train")
	train.Spec.NumberOfClusters = ptr.To[int32](2)
	train.Status = clusterv1beta1.PlacementStatus{NumberOfSelectedClusters: 2,
		DecisionGroups: []clusterv1beta1.DecisionGroupStatus{{DecisionGroupIndex: 0, DecisionGroupName: "canary", ClusterCount: 1}, {DecisionGroupIndex: 1, ClusterCount: 1}},
		Conditions:     []metav1.Condition{cond(clusterv1beta1.PlacementConditionSatisfied, metav1.ConditionTrue, "AllDecisionsScheduled", "All cluster decisions scheduled", time.Minute)}}
	off := p("ml", "off")
	off.Annotations = map[string]string{clusterv1beta1.PlacementDisableAnnotation: "true"}
	decision := func(ns, placement, name, group string, clusters ...string) clusterv1beta1.PlacementDecision {
		d := clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels: map[string]string{clusterv1beta1.PlacementLabel: placement, clusterv1beta1.DecisionGroupIndexLabel: group}}}
		for _, c := range clusters {
			d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c, Reason: "score of " + c})
		}
		return d
	}
	decisions := []clusterv1beta1.PlacementDecision{
		decision("ml", "train", "train-decision-2", "1", "b"),
		decision("ml", "train", "train-decision-1", "0", "a"),
		decision("other", "train", "train-decision-1", "0", "c"), // another namespace's placement of the same name
		decision("ml", "off", "off-decision-1", "not-a-number", "d"),
	}
	want := []Placement{
		{Namespace: "ml", Name: "off", ClusterSets: []string{}, Conditions: []Condition{}, DecisionGroups: []DecisionGroup{}, SchedulingDisabled: true,
			Decisions: []Decision{{Cluster: "d", Reason: "score of d"}}},
		{Namespace: "ml", Name: "train", NumberOfClusters: ptr.To[int32](2), ClusterSets: []string{}, Selected: 2,
			Conditions:     []Condition{{Type: clusterv1beta1.PlacementConditionSatisfied, Status: "True", Reason: "AllDecisionsScheduled", Message: "All cluster decisions scheduled"}},
			DecisionGroups: []DecisionGroup{{Index: 0, Name: "canary", ClusterCount: 1}, {Index: 1, ClusterCount: 1}},
			Decisions:      []Decision{{Cluster: "a", Reason: "score of a", DecisionGroupIndex: ptr.To[int32](0)}, {Cluster: "b", Reason: "score of b", DecisionGroupIndex: ptr.To[int32](1)}}},
	}
	got := placementReports([]clusterv1beta1.Placement{train, off}, decisions)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("placementReports (-want +got):\n%s", diff)
	}
}

func TestWorkReport(t *testing.T) {
	manifest := workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ml"}}`)}}
	work := func(cluster, name string, conds ...metav1.Condition) workv1.ManifestWork {
		return workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name},
			Spec:   workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{manifest, manifest}}},
			Status: workv1.ManifestWorkStatus{Conditions: conds}}
	}
	ok := work("east", "train",
		cond(workv1.WorkApplied, metav1.ConditionTrue, "Applied", "", 0), cond(workv1.WorkAvailable, metav1.ConditionTrue, "Available", "", 0))
	ok.Labels = map[string]string{workreplicaset.SetLabel: "research.train"}
	ok.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{
		{Conditions: []metav1.Condition{cond(workv1.ManifestApplied, metav1.ConditionTrue, "", "", 0), cond(workv1.ManifestAvailable, metav1.ConditionTrue, "", "", 0)}},
		{Conditions: []metav1.Condition{cond(workv1.ManifestApplied, metav1.ConditionTrue, "", "", 0), cond(workv1.ManifestAvailable, metav1.ConditionFalse, "", "", 0)}},
	}
	failing := work("east", "broken", cond(workv1.WorkApplied, metav1.ConditionFalse, "AppliedManifestWorkFailed", "Failed to apply manifest: forbidden", 0),
		cond(workv1.WorkDegraded, metav1.ConditionTrue, "Degraded", "not converging", 0))
	waiting := work("west", "train")
	got := workReport([]workv1.ManifestWork{waiting, ok, failing})
	want := WorksOutput{
		Clusters: []ClusterWorks{{Cluster: "east", Works: 2, Applied: 1, Available: 1, Degraded: 1}, {Cluster: "west", Works: 1, Unreported: 1}},
		Works: []Work{
			{Cluster: "east", Name: "broken", Manifests: 2, Applied: "False", Available: "Unknown", Degraded: "True",
				Problems: []string{"Applied: Failed to apply manifest: forbidden", "Degraded: not converging"}},
			{Cluster: "east", Name: "train", Manifests: 2, Applied: "True", Available: "True", ManifestsApplied: 2, ManifestsAvailable: 1, ReplicaSet: "research/train"},
			{Cluster: "west", Name: "train", Manifests: 2, Applied: "Unknown", Available: "Unknown"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("workReport (-want +got):\n%s", diff)
	}
}
