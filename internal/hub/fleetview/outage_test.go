package fleetview

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/contract/fencing"
)

func TestClusterTimeline(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	lost := func(availableAt int, status metav1.ConditionStatus) *clusterv1.ManagedCluster {
		return &clusterv1.ManagedCluster{
			ObjectMeta: metav1.ObjectMeta{Name: "gpu-1", Annotations: map[string]string{
				fencing.AnnotationTiming: fencing.Default.String(), fencing.AnnotationEpoch: "2", fencing.AnnotationLostAt: at(30).Format(time.RFC3339),
				fencing.AnnotationRequeued: fencing.WithRequeued(fencing.Requeued{}, 2, []string{"team/a", "team/b", "team/c"}).String()}},
			Status: clusterv1.ManagedClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: status,
				Reason: "R", LastTransitionTime: metav1.NewTime(at(availableAt))}}},
		}
	}
	cut := lost(25, metav1.ConditionUnknown)
	cut.Spec.Taints = []clusterv1.Taint{{Key: clusterv1.ManagedClusterTaintUnreachable, TimeAdded: ptr.To(metav1.NewTime(at(26)))}}
	healed := lost(101, metav1.ConditionTrue)
	healed.Status.Conditions = append(healed.Status.Conditions, metav1.Condition{Type: fencing.ConditionWorkloadsFenced, Status: metav1.ConditionFalse,
		Reason: "Healed", Message: "1 stopped", LastTransitionTime: metav1.NewTime(at(102))})
	stale := lost(25, metav1.ConditionUnknown)
	stale.Annotations[fencing.AnnotationEpoch] = "3" // a record of the loss before this one
	lease := func(s int) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: ptr.To(metav1.NewMicroTime(at(s)))}}
	}
	admitted := func(cluster string, s int) *kueuev1beta2.Workload {
		return &kueuev1beta2.Workload{Status: kueuev1beta2.WorkloadStatus{ClusterName: ptr.To(cluster), Conditions: []metav1.Condition{
			{Type: kueuev1beta2.WorkloadAdmitted, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(at(s))}}}}
	}
	workloads := map[string]*kueuev1beta2.Workload{"team/a": admitted("gpu-2", 40), "team/b": {}}
	finished := &kueuev1beta2.Workload{Status: kueuev1beta2.WorkloadStatus{ClusterName: ptr.To("gpu-3"), Conditions: []metav1.Condition{
		{Type: kueuev1beta2.WorkloadAdmitted, Status: metav1.ConditionFalse, LastTransitionTime: metav1.NewTime(at(60))},
		{Type: kueuev1beta2.WorkloadFinished, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(at(60))}}}}
	type ev struct {
		At    int
		Stage string
	}
	for name, tc := range map[string]struct {
		mc        *clusterv1.ManagedCluster
		lease     *coordinationv1.Lease
		workloads map[string]*kueuev1beta2.Workload // the default's when nil
		want      []ev
		wantNotes []string
	}{
		"cut: heartbeat, fence, unreachable, lost, a workload elsewhere": {mc: cut, lease: lease(0),
			want:      []ev{{0, StageHeartbeat}, {20, StageFence}, {25, StageAvailable}, {26, StageTainted}, {30, StageLost}, {40, StageMoved}},
			wantNotes: []string{"1 requeued workloads are not running elsewhere yet", "1 requeued workloads are gone from the hub, or you may not read them"}},
		"healed: the heartbeat before the loss is LostAfter before it": {mc: healed, lease: lease(100),
			want:      []ev{{0, StageHeartbeat}, {20, StageFence}, {30, StageLost}, {40, StageMoved}, {101, StageAvailable}, {102, StageReported}},
			wantNotes: []string{"1 requeued workloads are not running elsewhere yet", "1 requeued workloads are gone from the hub, or you may not read them"}},
		"a requeued workload that ran elsewhere and finished": {mc: cut, lease: lease(0), workloads: map[string]*kueuev1beta2.Workload{"team/c": finished},
			want:      []ev{{0, StageHeartbeat}, {20, StageFence}, {25, StageAvailable}, {26, StageTainted}, {30, StageLost}, {60, StageMoved}},
			wantNotes: []string{"2 requeued workloads are gone from the hub, or you may not read them"}},
		"a record of an older loss is not this one's": {mc: stale, lease: lease(0),
			want: []ev{{0, StageHeartbeat}, {20, StageFence}, {25, StageAvailable}, {30, StageLost}}},
		"never lost": {mc: &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1"}}, lease: lease(5), want: []ev{{5, StageHeartbeat}}},
	} {
		t.Run(name, func(t *testing.T) {
			wls := workloads
			if tc.workloads != nil {
				wls = tc.workloads
			}
			got := ClusterTimeline(tc.mc, tc.lease, wls)
			var evs []ev
			for _, e := range got.Events {
				evs = append(evs, ev{int(e.Time.Sub(t0) / time.Second), e.Stage})
			}
			if diff := cmp.Diff(tc.want, evs); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNotes, got.Notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}
