package scoreratelimit

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
	p   *clusterv1beta1.Placement
	now time.Time
	cur []clusterv1beta1.ClusterDecision
}

func (h *fakeHandle) Placement() *clusterv1beta1.Placement               { return h.p }
func (h *fakeHandle) Now() time.Time                                     { return h.now }
func (h *fakeHandle) InCurrentDecisions(string) bool                     { return false }
func (h *fakeHandle) OtherDecisionCounts() map[string]int                { return nil }
func (h *fakeHandle) CurrentDecisions() []clusterv1beta1.ClusterDecision { return h.cur }
func (h *fakeHandle) AddOnPlacementScore(_, _ string) *clusterv1alpha1.AddOnPlacementScore {
	return nil
}
func (h *fakeHandle) ClusterObject(*clusterv1.ManagedCluster) (map[string]any, error) {
	return nil, nil
}

func TestDecide(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cur := []clusterv1beta1.ClusterDecision{{ClusterName: "a", Score: 10, Reason: "old a"}, {ClusterName: "b", Score: 20, Reason: "old b"}}
	rescored := []clusterv1beta1.ClusterDecision{{ClusterName: "a", Score: 11, Reason: "new a"}, {ClusterName: "b", Score: 20, Reason: "old b"}}
	cases := map[string]struct {
		limit   string
		last    *time.Time
		now     time.Duration // after t0
		cur     []clusterv1beta1.ClusterDecision
		in      []clusterv1beta1.ClusterDecision
		want    []clusterv1beta1.ClusterDecision
		requeue time.Duration
	}{
		"held within the default 1m":  {last: &t0, now: 20 * time.Second, cur: cur, in: rescored, want: cur, requeue: 40 * time.Second},
		"held within 5m":              {limit: "5m", last: &t0, now: 2 * time.Minute, cur: cur, in: rescored, want: cur, requeue: 3 * time.Minute},
		"written once the limit ends": {limit: "5m", last: &t0, now: 5 * time.Minute, cur: cur, in: rescored, want: rescored},
		"written with 0s":             {limit: "0s", last: &t0, now: time.Second, cur: cur, in: rescored, want: rescored},
		"written when never before":   {now: time.Second, cur: cur, in: rescored, want: rescored},
		"written without current":     {last: &t0, now: time.Second, in: rescored, want: rescored},
		"set change written at once": {last: &t0, now: time.Second, cur: cur,
			in:   []clusterv1beta1.ClusterDecision{{ClusterName: "a", Score: 11}, {ClusterName: "c", Score: 5}},
			want: []clusterv1beta1.ClusterDecision{{ClusterName: "a", Score: 11}, {ClusterName: "c", Score: 5}}},
		"nothing to hold": {last: &t0, now: time.Second, cur: cur, in: cur, want: cur},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := &clusterv1beta1.Placement{Spec: clusterv1beta1.PlacementSpec{ScoreRateLimit: tc.limit}}
			if tc.last != nil {
				p.Status.LastScoreUpdateTime = &metav1.Time{Time: *tc.last}
			}
			pl, err := New(&fakeHandle{p: p, now: t0.Add(tc.now), cur: tc.cur}, framework.Args{})
			if err != nil {
				t.Fatal(err)
			}
			got := append([]clusterv1beta1.ClusterDecision(nil), tc.in...)
			st := pl.(framework.DecidePlugin).Decide(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
			var requeue time.Duration
			if st != nil {
				requeue = st.RequeueAfter
			}
			if requeue != tc.requeue {
				t.Errorf("requeue %v, want %v", requeue, tc.requeue)
			}
		})
	}
}

func TestParse(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		"default": {in: "", want: time.Minute},
		"seconds": {in: "30s", want: 30 * time.Second},
		"hours":   {in: "2h", want: 2 * time.Hour},
		"days":    {in: "1d", wantErr: true},
		"mixed":   {in: "1m30s", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("Parse(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
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
