package spread

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
)

type fakeHandle struct {
	p       *clusterv1beta1.Placement
	current map[string]bool
}

func (h *fakeHandle) Placement() *clusterv1beta1.Placement               { return h.p }
func (h *fakeHandle) Now() time.Time                                     { return time.Time{} }
func (h *fakeHandle) InCurrentDecisions(c string) bool                   { return h.current[c] }
func (h *fakeHandle) OtherDecisionCounts() map[string]int                { return nil }
func (h *fakeHandle) CurrentDecisions() []clusterv1beta1.ClusterDecision { return nil }
func (h *fakeHandle) AddOnPlacementScore(_, _ string) *clusterv1alpha1.AddOnPlacementScore {
	return nil
}
func (h *fakeHandle) ClusterObject(*clusterv1.ManagedCluster) (map[string]any, error) {
	return nil, nil
}

func cluster(name, zone, provider string) *clusterv1.ManagedCluster {
	c := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if zone != "" {
		c.Labels["zone"] = zone
	}
	if provider != "" {
		c.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "provider", Value: provider}}
	}
	return c
}

func TestSpreadScores(t *testing.T) {
	zone := clusterv1beta1.SpreadConstraintsTerm{TopologyKey: "zone", TopologyKeyType: clusterv1beta1.TopologyKeyTypeLabel}
	provider := clusterv1beta1.SpreadConstraintsTerm{TopologyKey: "provider", TopologyKeyType: clusterv1beta1.TopologyKeyTypeClaim}
	clusters := []*clusterv1.ManagedCluster{
		cluster("a1", "a", "aws"), cluster("a2", "a", "aws"), cluster("a3", "a", "gcp"),
		cluster("b1", "b", "gcp"), cluster("x1", "", "aws"),
	}
	cases := map[string]struct {
		terms   []clusterv1beta1.SpreadConstraintsTerm
		current map[string]bool
		want    []int64
	}{
		"no constraint: all 0": {want: []int64{0, 0, 0, 0, 0}},
		// zone a has 3: positions 0,1,2 score 100,0,-100; b1 first of b; x1 has no zone.
		"by zone, by name": {terms: []clusterv1beta1.SpreadConstraintsTerm{zone}, want: []int64{100, 0, -100, 100, -100}},
		"current first":    {terms: []clusterv1beta1.SpreadConstraintsTerm{zone}, current: map[string]bool{"a3": true}, want: []int64{0, -100, 100, 100, -100}},
		// provider: aws a1 a2 x1 (100, 0, -100), gcp a3 b1 (100, 0); the mean of both.
		"two constraints": {terms: []clusterv1beta1.SpreadConstraintsTerm{zone, provider}, want: []int64{100, 0, 0, 50, -100}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := &clusterv1beta1.Placement{Spec: clusterv1beta1.PlacementSpec{SpreadPolicy: clusterv1beta1.SpreadPolicy{SpreadConstraints: tc.terms}}}
			pl, err := NewPrioritizer(&fakeHandle{p: p, current: tc.current}, framework.Args{})
			if err != nil {
				t.Fatal(err)
			}
			got := make([]int64, len(clusters))
			pl.(framework.NormalizeScorePlugin).NormalizeScore(clusters, got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

// PerCluster has no snapshot to memoize over: it computes nothing ahead, and plugins fall back
// to computing each cluster's value.
func (h *fakeHandle) ResourceUsage(string) *usagev1alpha1.ResourceUsage { return nil }

func (h *fakeHandle) PerCluster(string, func(*clusterv1.ManagedCluster) int64) map[*clusterv1.ManagedCluster]int64 {
	return nil
}
