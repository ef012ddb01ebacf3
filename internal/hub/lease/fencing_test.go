package lease

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/contract/fencing"
)

// TestFencedClusterDeclaredLost: a cluster under a fencing Timing is declared lost LostAfter after
// its last renewal, not after OCM's five lease periods, and its epoch is raised once, before the
// condition changes; a cluster whose agent does not renew at the Timing's period yet is judged by
// OCM's rule.
func TestFencedClusterDeclaredLost(t *testing.T) {
	tests := map[string]struct {
		agentPeriod int32 // what the agent recorded in the Lease
		since       time.Duration
		epochBefore string
		// lostAt is the lost-at annotation already there: an earlier raise whose status write failed.
		lostAt      *time.Time
		wantStatus  metav1.ConditionStatus
		wantEpoch   string
		wantRequeue time.Duration
	}{
		"renewed 29s ago":                  {agentPeriod: 5, since: 29 * time.Second, wantStatus: metav1.ConditionTrue, wantRequeue: time.Second},
		"renewed 30s ago":                  {agentPeriod: 5, since: 30 * time.Second, wantStatus: metav1.ConditionUnknown, wantEpoch: "1"},
		"epoch counts on":                  {agentPeriod: 5, since: 31 * time.Second, epochBefore: "6", wantStatus: metav1.ConditionUnknown, wantEpoch: "7"},
		"raised already for this outage":   {agentPeriod: 5, since: 31 * time.Second, epochBefore: "7", lostAt: ago(time.Second), wantStatus: metav1.ConditionUnknown, wantEpoch: "7"},
		"raised for an earlier outage":     {agentPeriod: 5, since: 31 * time.Second, epochBefore: "7", lostAt: ago(time.Hour), wantStatus: metav1.ConditionUnknown, wantEpoch: "8"},
		"agent still at the cluster's 60s": {agentPeriod: 60, since: 31 * time.Second, wantStatus: metav1.ConditionTrue, wantRequeue: 5*time.Minute - 31*time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clk := clocktesting.NewFakePassiveClock(now)
			mc := makeCluster("a").LeaseSeconds(60).Condition(available(metav1.ConditionTrue, now.Add(-time.Hour))).Obj()
			mc.Annotations = map[string]string{fencing.AnnotationTiming: fencing.Default.String()}
			if tc.epochBefore != "" {
				mc.Annotations[fencing.AnnotationEpoch] = tc.epochBefore
			}
			if tc.lostAt != nil {
				mc.Annotations[fencing.AnnotationLostAt] = tc.lostAt.UTC().Format(time.RFC3339)
			}
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).
				WithObjects(mc, withPeriod(lease("a", ago(tc.since), now.Add(-time.Hour)), tc.agentPeriod)).
				WithStatusSubresource(&clusterv1.ManagedCluster{}).Build()
			r := &Reconciler{Client: c, Clock: clk, APIReader: c}
			req := reconcile.Request{NamespacedName: client.ObjectKey{Name: "a"}}
			res, err := r.Reconcile(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got := &clusterv1.ManagedCluster{}
			if err := c.Get(ctx, req.NamespacedName, got); err != nil {
				t.Fatal(err)
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
			if cond.Status != tc.wantStatus {
				t.Errorf("Available = %s (%s), want %s", cond.Status, cond.Message, tc.wantStatus)
			}
			if tc.wantStatus == metav1.ConditionUnknown && !strings.Contains(cond.Message, "declared lost") {
				t.Errorf("message %q does not say the cluster is declared lost", cond.Message)
			}
			wantEpoch := tc.wantEpoch
			if wantEpoch == "" {
				wantEpoch = tc.epochBefore
			}
			if diff := cmp.Diff(wantEpoch, got.Annotations[fencing.AnnotationEpoch]); diff != "" {
				t.Errorf("epoch (-want +got):\n%s", diff)
			}
			if res.RequeueAfter != tc.wantRequeue {
				t.Errorf("requeue after %s, want %s", res.RequeueAfter, tc.wantRequeue)
			}
			// Once lost, more reconciles change nothing: the epoch is raised once a loss.
			if _, err := r.Reconcile(ctx, req); err != nil {
				t.Fatal(err)
			}
			again := &clusterv1.ManagedCluster{}
			if err := c.Get(ctx, req.NamespacedName, again); err != nil {
				t.Fatal(err)
			}
			if again.Annotations[fencing.AnnotationEpoch] != got.Annotations[fencing.AnnotationEpoch] {
				t.Errorf("a second reconcile raised the epoch again: %s -> %s", got.Annotations[fencing.AnnotationEpoch], again.Annotations[fencing.AnnotationEpoch])
			}
		})
	}
}
