package failover

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	failoverv1alpha1 "github.com/flotilla/flotilla/api/failover/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/contract/fencing"
)

func policy(name, set string, lease, fence, lost int32) failoverv1alpha1.FailoverPolicy {
	return failoverv1alpha1.FailoverPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: failoverv1alpha1.FailoverPolicySpec{ClusterSet: set, LeaseDurationSeconds: lease, FenceAfterSeconds: fence, LostAfterSeconds: lost}}
}

func set(name string) clusterv1beta2.ManagedClusterSet {
	return clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func work(name string, fenced bool) workv1.ManifestWork {
	w := workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "gpu-1"}}
	if fenced {
		w.Annotations = map[string]string{fencing.AnnotationWorkFenced: "true"}
	}
	return w
}

func TestDesiredTiming(t *testing.T) {
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1", Labels: map[string]string{clusterv1beta2.ClusterSetLabel: "gpus"}}}
	sec := time.Second
	tests := map[string]struct {
		policies []failoverv1alpha1.FailoverPolicy
		sets     []clusterv1beta2.ManagedClusterSet
		works    []workv1.ManifestWork
		want     fencing.Timing
		wantOK   bool
		worker   bool
	}{
		"a MultiKueue worker, defaults": {worker: true, want: fencing.Default, wantOK: true},
		"nothing fenced":                {sets: []clusterv1beta2.ManagedClusterSet{set("gpus")}, works: []workv1.ManifestWork{work("serve", false)}},
		"a fenced work, defaults":       {works: []workv1.ManifestWork{work("serve", false), work("train", true)}, want: fencing.Default, wantOK: true},
		"the set's policy": {policies: []failoverv1alpha1.FailoverPolicy{policy("p", "gpus", 2, 10, 20)}, sets: []clusterv1beta2.ManagedClusterSet{set("gpus")},
			want: fencing.Timing{Lease: 2 * sec, FenceAfter: 10 * sec, LostAfter: 20 * sec}, wantOK: true},
		"another set's policy": {policies: []failoverv1alpha1.FailoverPolicy{policy("p", "cpus", 2, 10, 20)}, sets: []clusterv1beta2.ManagedClusterSet{set("gpus"), set("cpus")}},
		"a policy of a missing set": {policies: []failoverv1alpha1.FailoverPolicy{policy("p", "gpus", 2, 10, 20)},
			works: []workv1.ManifestWork{work("train", true)}, want: fencing.Default, wantOK: true},
		"a policy that breaks the rule does not count": {policies: []failoverv1alpha1.FailoverPolicy{policy("p", "gpus", 5, 20, 29)}, sets: []clusterv1beta2.ManagedClusterSet{set("gpus")}},
		// Stored before the API server had the rule: its fence would rise between renewals.
		"a policy whose fence rises between renewals does not count": {policies: []failoverv1alpha1.FailoverPolicy{policy("p", "gpus", 10, 5, 30)}, sets: []clusterv1beta2.ManagedClusterSet{set("gpus")}},
		"two sets combine": {
			policies: []failoverv1alpha1.FailoverPolicy{policy("b", "gpus", 2, 30, 40), policy("a", "everyone", 5, 20, 60)},
			sets:     []clusterv1beta2.ManagedClusterSet{set("gpus"), {ObjectMeta: metav1.ObjectMeta{Name: "everyone"}, Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector, LabelSelector: &metav1.LabelSelector{}}}}},
			want:     fencing.Timing{Lease: 2 * sec, FenceAfter: 20 * sec, LostAfter: 60 * sec}, wantOK: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := desiredTiming(mc, tc.policies, tc.sets, tc.works, tc.worker)
			if diff := cmp.Diff(tc.want, got); diff != "" || ok != tc.wantOK {
				t.Errorf("timing ok=%v want %v (-want +got):\n%s", ok, tc.wantOK, diff)
			}
		})
	}
}
