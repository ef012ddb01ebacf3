package kueue

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/contract/fencing"
)

func TestRequeuer(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 30, 0, time.UTC)
	lostCluster := func(name, lostAt string, status metav1.ConditionStatus) *clusterv1.ManagedCluster {
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
			fencing.AnnotationTiming: fencing.Default.String(), fencing.AnnotationEpoch: "1"}}}
		if lostAt != "" {
			mc.Annotations[fencing.AnnotationLostAt] = lostAt
		}
		mc.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: status,
			Reason: clusterv1.ManagedClusterReasonLeaseUpdateStopped, LastTransitionTime: metav1.NewTime(at)}}
		return mc
	}
	workload := func(name, cluster string, state kueuev1beta2.CheckState) *kueuev1beta2.Workload {
		wl := &kueuev1beta2.Workload{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"}}
		if cluster != "" {
			wl.Status.ClusterName = ptr.To(cluster)
		}
		wl.Status.AdmissionChecks = []kueuev1beta2.AdmissionCheckState{{Name: "mk", State: state, LastTransitionTime: metav1.NewTime(at.Add(-time.Hour))}}
		return wl
	}
	config := func(managed bool, clusters ...string) *kueuev1beta2.MultiKueueConfig {
		c := &kueuev1beta2.MultiKueueConfig{ObjectMeta: metav1.ObjectMeta{Name: "gpus"}, Spec: kueuev1beta2.MultiKueueConfigSpec{Clusters: clusters}}
		if managed {
			c.Labels = map[string]string{ManagedLabel: ManagedValue}
		}
		return c
	}
	notYet := map[string]kueuev1beta2.CheckState{"on-lost": kueuev1beta2.CheckStateReady, "elsewhere": kueuev1beta2.CheckStateReady, "waiting": kueuev1beta2.CheckStatePending}
	requeued := map[string]kueuev1beta2.CheckState{"on-lost": kueuev1beta2.CheckStateRetry, "elsewhere": kueuev1beta2.CheckStateReady, "waiting": kueuev1beta2.CheckStatePending}
	tests := map[string]struct {
		cluster *clusterv1.ManagedCluster
		config  *kueuev1beta2.MultiKueueConfig
		since   time.Duration // from the loss to now; a second when zero
		want    map[string]kueuev1beta2.CheckState
	}{
		"declared lost, out of the hub's config": {cluster: lostCluster("gpu-1", at.Format(time.RFC3339), metav1.ConditionUnknown),
			config: config(true, "gpu-2"), want: requeued},
		"declared lost, still in the hub's config: wait for it to leave": {cluster: lostCluster("gpu-1", at.Format(time.RFC3339), metav1.ConditionUnknown),
			config: config(true, "gpu-1", "gpu-2"), want: notYet},
		"declared lost, still in the hub's config after ConfigWait": {cluster: lostCluster("gpu-1", at.Format(time.RFC3339), metav1.ConditionUnknown),
			config: config(true, "gpu-1", "gpu-2"), since: ConfigWait, want: requeued},
		"declared lost, in someone else's config, which the hub does not change": {cluster: lostCluster("gpu-1", at.Format(time.RFC3339), metav1.ConditionUnknown),
			config: config(false, "gpu-1", "gpu-2"), want: requeued},
		"declared lost": {cluster: lostCluster("gpu-1", at.Format(time.RFC3339), metav1.ConditionUnknown),
			want: map[string]kueuev1beta2.CheckState{"on-lost": kueuev1beta2.CheckStateRetry, "elsewhere": kueuev1beta2.CheckStateReady, "waiting": kueuev1beta2.CheckStatePending}},
		"unknown, but not by the fencing timing": {cluster: lostCluster("gpu-1", "", metav1.ConditionUnknown),
			want: map[string]kueuev1beta2.CheckState{"on-lost": kueuev1beta2.CheckStateReady, "elsewhere": kueuev1beta2.CheckStateReady, "waiting": kueuev1beta2.CheckStatePending}},
		"an old loss, available again": {cluster: lostCluster("gpu-1", at.Add(-time.Hour).Format(time.RFC3339), metav1.ConditionTrue),
			want: map[string]kueuev1beta2.CheckState{"on-lost": kueuev1beta2.CheckStateReady, "elsewhere": kueuev1beta2.CheckStateReady, "waiting": kueuev1beta2.CheckStatePending}},
		"unknown again since, by OCM's rule": {cluster: lostCluster("gpu-1", at.Add(-time.Hour).Format(time.RFC3339), metav1.ConditionUnknown),
			want: map[string]kueuev1beta2.CheckState{"on-lost": kueuev1beta2.CheckStateReady, "elsewhere": kueuev1beta2.CheckStateReady, "waiting": kueuev1beta2.CheckStatePending}},
	}
	// A workload that finished on the lost worker (its status reached the hub) is never run again.
	finished := workload("finished-on-lost", "gpu-1", kueuev1beta2.CheckStateReady)
	finished.Status.Conditions = []metav1.Condition{{Type: kueuev1beta2.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "Succeeded", LastTransitionTime: metav1.NewTime(at.Add(-time.Minute))}}
	for name, tc := range tests {
		tc.want = maps.Clone(tc.want)
		tc.want["finished-on-lost"] = kueuev1beta2.CheckStateReady
		t.Run(name, func(t *testing.T) {
			check := &kueuev1beta2.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "mk"}, Spec: kueuev1beta2.AdmissionCheckSpec{ControllerName: kueuev1beta2.MultiKueueControllerName}}
			objs := []client.Object{tc.cluster, check}
			if tc.config != nil {
				objs = append(objs, tc.config)
			}
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).
				WithObjects(workload("on-lost", "gpu-1", kueuev1beta2.CheckStateReady), finished,
					workload("elsewhere", "gpu-2", kueuev1beta2.CheckStateReady), workload("waiting", "", kueuev1beta2.CheckStatePending)).
				WithStatusSubresource(&kueuev1beta2.Workload{}).Build()
			since := tc.since
			if since == 0 {
				since = time.Second
			}
			r := &RequeueReconciler{Client: c, Clock: clocktesting.NewFakePassiveClock(at.Add(since))}
			if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: "gpu-1"}}); err != nil {
				t.Fatal(err)
			}
			got := map[string]kueuev1beta2.CheckState{}
			l := &kueuev1beta2.WorkloadList{}
			if err := c.List(context.Background(), l); err != nil {
				t.Fatal(err)
			}
			for _, wl := range l.Items {
				got[wl.Name] = wl.Status.AdmissionChecks[0].State
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("check states (-want +got):\n%s", diff)
			}
			// The loss's record names what was requeued, under the cluster's epoch.
			mc := &clusterv1.ManagedCluster{}
			if err := c.Get(context.Background(), client.ObjectKey{Name: "gpu-1"}, mc); err != nil {
				t.Fatal(err)
			}
			rec, ok, err := fencing.RequeuedOf(mc.Annotations)
			if err != nil {
				t.Fatal(err)
			}
			if requeuedOne := tc.want["on-lost"] == kueuev1beta2.CheckStateRetry; ok != requeuedOne ||
				(ok && !cmp.Equal(rec, fencing.Requeued{Epoch: 1, Workloads: []string{"team/on-lost"}})) {
				t.Errorf("record %+v (present %v), want team/on-lost under epoch 1 exactly when it was requeued", rec, ok)
			}
		})
	}
}
