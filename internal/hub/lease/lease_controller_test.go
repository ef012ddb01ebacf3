package lease

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/apitest"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// makeCluster is an accepted cluster at generation 3.
func makeCluster(name string) *apitest.ClusterWrapper {
	return apitest.MakeCluster(name).Generation(3).Accepted()
}

func available(status metav1.ConditionStatus, at time.Time) metav1.Condition {
	return metav1.Condition{
		Type: clusterv1.ManagedClusterConditionAvailable, Status: status, Reason: "ManagedClusterAvailable",
		Message: "the spoke's API server is live", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(at),
	}
}

var joined = metav1.Condition{
	Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue, Reason: "ManagedClusterJoined",
	ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour)),
}

func lease(cluster string, renewed *time.Time, created time.Time) *coordinationv1.Lease {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
		Name: clusterv1.ManagedClusterLeaseName, Namespace: cluster, CreationTimestamp: metav1.NewTime(created),
	}}
	if renewed != nil {
		l.Spec.RenewTime = &metav1.MicroTime{Time: *renewed}
	}
	return l
}

func ago(d time.Duration) *time.Time {
	t := now.Add(-d)
	return &t
}

func unknown(message string, at time.Time) metav1.Condition {
	return metav1.Condition{
		Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionUnknown,
		Reason: clusterv1.ManagedClusterReasonLeaseUpdateStopped, Message: message,
		ObservedGeneration: 3, LastTransitionTime: metav1.NewTime(at),
	}
}

// withPeriod records in l the period its agent renews at.
func withPeriod(l *coordinationv1.Lease, seconds int32) *coordinationv1.Lease {
	l.Spec.LeaseDurationSeconds = &seconds
	return l
}

func TestDesiredConditions(t *testing.T) {
	cases := map[string]struct {
		cluster          *clusterv1.ManagedCluster
		lease            *coordinationv1.Lease
		wantConditions   []metav1.Condition
		wantRequeueAfter time.Duration
	}{
		"just renewed, default period: requeue after 5 x 60s": {
			cluster:          makeCluster("a").Condition(available(metav1.ConditionTrue, now.Add(-time.Hour))).Obj(),
			lease:            lease("a", ago(0), now.Add(-time.Hour)),
			wantConditions:   []metav1.Condition{available(metav1.ConditionTrue, now.Add(-time.Hour))},
			wantRequeueAfter: 5 * time.Minute,
		},
		"renewed 4m ago, default period: requeue at expiry": {
			cluster:          makeCluster("a").Condition(available(metav1.ConditionTrue, now.Add(-time.Hour))).Obj(),
			lease:            lease("a", ago(4*time.Minute), now.Add(-time.Hour)),
			wantConditions:   []metav1.Condition{available(metav1.ConditionTrue, now.Add(-time.Hour))},
			wantRequeueAfter: time.Minute,
		},
		"1s period, renewed 3.5s ago: requeue after 1.5s": {
			cluster:          makeCluster("a").LeaseSeconds(1).Obj(),
			lease:            lease("a", ago(3500*time.Millisecond), now.Add(-time.Hour)),
			wantRequeueAfter: 1500 * time.Millisecond,
		},
		"renewal ahead of the hub's clock: requeue later than a full grace period": {
			cluster:          makeCluster("a").LeaseSeconds(10).Obj(),
			lease:            lease("a", ago(-20*time.Second), now.Add(-time.Hour)),
			wantRequeueAfter: 70 * time.Second,
		},
		"period just shortened, last renewal at the old period: judged by the old one": {
			cluster:          makeCluster("a").LeaseSeconds(5).Obj(),
			lease:            withPeriod(lease("a", ago(40*time.Second), now.Add(-time.Hour)), 60),
			wantRequeueAfter: 260 * time.Second,
		},
		"period lengthened: the cluster's, the longer": {
			cluster:          makeCluster("a").LeaseSeconds(60).Obj(),
			lease:            withPeriod(lease("a", ago(40*time.Second), now.Add(-time.Hour)), 5),
			wantRequeueAfter: 260 * time.Second,
		},
		"renewed at the short period and silent since: expired": {
			cluster: makeCluster("a").LeaseSeconds(5).Obj(),
			lease:   withPeriod(lease("a", ago(30*time.Second), now.Add(-time.Hour)), 5),
			wantConditions: []metav1.Condition{unknown(
				"the cluster's agent stopped renewing its lease: Lease a/managed-cluster-lease was last renewed at 2026-03-01T11:59:30Z, more than 5 x 5s ago", now)},
		},
		"never renewed: counts from creation": {
			cluster:          makeCluster("a").LeaseSeconds(10).Obj(),
			lease:            lease("a", nil, now.Add(-20*time.Second)),
			wantRequeueAfter: 30 * time.Second,
		},
		"expired while True: Unknown since the last renewal, other conditions kept": {
			cluster: makeCluster("a").Condition(joined).Condition(available(metav1.ConditionTrue, now.Add(-time.Hour))).Obj(),
			lease:   lease("a", ago(6*time.Minute), now.Add(-time.Hour)),
			wantConditions: []metav1.Condition{joined, unknown(
				"the cluster's agent stopped renewing its lease: Lease a/managed-cluster-lease was last renewed at 2026-03-01T11:54:00Z, more than 5 x 60s ago", now)},
		},
		"expired exactly now: Unknown, no zero-delay requeue": {
			cluster: makeCluster("a").LeaseSeconds(1).Obj(),
			lease:   lease("a", ago(5*time.Second), now.Add(-time.Hour)),
			wantConditions: []metav1.Condition{unknown(
				"the cluster's agent stopped renewing its lease: Lease a/managed-cluster-lease was last renewed at 2026-03-01T11:59:55Z, more than 5 x 1s ago", now)},
		},
		"expired while False: Unknown": {
			cluster: makeCluster("a").Condition(available(metav1.ConditionFalse, now.Add(-time.Hour))).Obj(),
			lease:   lease("a", ago(time.Hour), now.Add(-2*time.Hour)),
			wantConditions: []metav1.Condition{unknown(
				"the cluster's agent stopped renewing its lease: Lease a/managed-cluster-lease was last renewed at 2026-03-01T11:00:00Z, more than 5 x 60s ago", now)},
		},
		"already Unknown: transition time kept": {
			cluster: makeCluster("a").Condition(unknown(
				"the cluster's agent stopped renewing its lease: Lease a/managed-cluster-lease was last renewed at 2026-03-01T11:00:00Z, more than 5 x 60s ago", now.Add(-50*time.Minute))).Obj(),
			lease: lease("a", ago(time.Hour), now.Add(-2*time.Hour)),
			wantConditions: []metav1.Condition{unknown(
				"the cluster's agent stopped renewing its lease: Lease a/managed-cluster-lease was last renewed at 2026-03-01T11:00:00Z, more than 5 x 60s ago", now.Add(-50*time.Minute))},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := tc.cluster.DeepCopy()
			gotConditions, gotRequeueAfter := leaseConditions(tc.cluster, tc.lease, now)
			if diff := cmp.Diff(tc.wantConditions, gotConditions); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if gotRequeueAfter != tc.wantRequeueAfter {
				t.Errorf("requeue after %s, want %s", gotRequeueAfter, tc.wantRequeueAfter)
			}
			if diff := cmp.Diff(before, tc.cluster); diff != "" {
				t.Errorf("desiredConditions changed its input (-before +after):\n%s", diff)
			}
		})
	}
}

func TestClockSynced(t *testing.T) {
	cases := map[string]struct {
		renewed    time.Time
		wantStatus metav1.ConditionStatus
		wantReason string
	}{
		"renewed a moment ago":         {renewed: now.Add(-time.Second), wantStatus: metav1.ConditionTrue, wantReason: "ManagedClusterClockSynced"},
		"a little ahead, within bound": {renewed: now.Add(3 * time.Second), wantStatus: metav1.ConditionTrue, wantReason: "ManagedClusterClockSynced"},
		"a minute ahead":               {renewed: now.Add(time.Minute), wantStatus: metav1.ConditionFalse, wantReason: "ManagedClusterClockOutOfSync"},
		"expired: left as it was":      {renewed: now.Add(-time.Hour)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, _ := desiredConditions(makeCluster("a").Obj(), lease("a", &tc.renewed, now.Add(-2*time.Hour)), now)
			var status metav1.ConditionStatus
			var reason string
			if c := meta.FindStatusCondition(got, clusterv1.ManagedClusterConditionClockSynced); c != nil {
				status, reason = c.Status, c.Reason
			}
			if diff := cmp.Diff([]string{string(tc.wantStatus), tc.wantReason}, []string{string(status), reason}); diff != "" {
				t.Errorf("ClockSynced (-want +got):\n%s", diff)
			}
		})
	}
}
