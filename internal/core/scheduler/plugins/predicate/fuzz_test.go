package predicate

import (
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
)

// FuzzCEL compiles and evaluates arbitrary celExpressions, as any Placement author may write
// them, against a cluster with labels, claims, an AddOnPlacementScore and ResourceUsage figures.
// It must never panic; an expression that does not compile is a ConfigError naming the field;
// one that compiles either keeps the cluster or filters it out saying which expression and why.
func FuzzCEL(f *testing.F) {
	for _, seed := range []string{
		`managedCluster.metadata.labels["region"] == "east"`,
		`managedCluster.scores("gpu").exists(s, s.name == "a" && s.value > 10)`,
		`managedCluster.scores(1) == []`,
		`managedCluster.scores("missing").size() == 0`,
		`managedCluster.freeGPUs("NVIDIA-A100") >= 8`,
		`managedCluster.nodesWithFreeGPUs("", -1) > 0`,
		`managedCluster.gpuFit("", -9223372036854775807, 9223372036854775807)`,
		`managedCluster.gpuFit("", 0, 0)`,
		`managedCluster.nodesWithFree("memory", "", "1e999Ei") > 0`,
		`managedCluster.nodesWithFree("nvidia.com/gpu", "", "-1") > 0`,
		`managedCluster.status.clusterClaims.exists(c, c.name == "id.k8s.io" && c.value.startsWith("c"))`,
		`[1, 2, 3].map(x, [1, 2, 3].map(y, x * y)).size() > 0`,
		`"abc".matches("(a+)+$")`,
		`math.greatest(1, 2) == 2 && sets.contains([1], [1]) && "a,b".split(",").size() == 2`,
		`managedCluster.metadata.name`,
		`1 / 0 == 1`,
		`9223372036854775807 + 1 > 0`,
		`managedCluster.spec.hubAcceptsClient`,
		`)(`,
		``,
	} {
		f.Add(seed)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	observed, until := metav1.NewTime(now.Add(-time.Minute)), metav1.NewTime(now.Add(time.Minute))
	q := resource.MustParse
	usages := map[string]*usagev1alpha1.ResourceUsage{"c1": {Status: usagev1alpha1.ResourceUsageStatus{
		ObservedTime: &observed, ValidUntil: &until,
		Resources: []usagev1alpha1.ResourceFigures{
			{Name: "memory", Capacity: q("256Gi"), Allocatable: q("250Gi"), Free: q("96Gi"),
				FreeNodes: []usagev1alpha1.NodesWithFree{{Free: q("64Gi"), Nodes: 1}, {Free: q("32Gi"), Nodes: 2}}},
			{Name: "nvidia.com/gpu", Model: "NVIDIA-A100", Capacity: q("24"), Allocatable: q("24"), Free: q("16"),
				FreeNodes: []usagev1alpha1.NodesWithFree{{Free: q("8"), Nodes: 1}, {Free: q("4"), Nodes: 3}}},
		}}}}
	scores := map[string]*clusterv1alpha1.AddOnPlacementScore{"c1/gpu": {Status: clusterv1alpha1.AddOnPlacementScoreStatus{
		Scores: []clusterv1alpha1.AddOnPlacementScoreItem{{Name: "a", Value: 50}, {Name: "b", Value: -100}}}}}
	cluster := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "c1", Labels: map[string]string{"region": "east"}},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
		Status:     clusterv1.ManagedClusterStatus{ClusterClaims: []clusterv1.ManagedClusterClaim{{Name: "id.k8s.io", Value: "c1"}}},
	}
	f.Fuzz(func(t *testing.T, expr string) {
		h := &fakeHandle{placement: &clusterv1beta1.Placement{Spec: clusterv1beta1.PlacementSpec{
			Predicates: []clusterv1beta1.ClusterPredicate{celPredicate(expr)}}}, scores: scores, usages: usages, now: now}
		pl, err := New(h, framework.Args{})
		if err != nil {
			var ce *framework.ConfigError
			if !errors.As(err, &ce) || ce.Field != "spec.predicates[0].requiredClusterSelector.celSelector.celExpressions[0]" {
				t.Fatalf("New failed with %T %v, want a ConfigError naming the expression's field", err, err)
			}
			return
		}
		st := pl.(framework.FilterPlugin).Filter(cluster.DeepCopy())
		if st != nil && (st.Code != framework.Unschedulable || !strings.HasPrefix(st.Message, "predicates[0]: celExpressions[0] ")) {
			t.Fatalf("Filter() = %+v, want the cluster kept or Unschedulable naming predicates[0]: celExpressions[0]", st)
		}
	})
}
