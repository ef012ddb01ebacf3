package failover

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	failoverv1alpha1 "github.com/flotilla/flotilla/api/failover/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
)

func TestPolicyCondition(t *testing.T) {
	tests := map[string]struct {
		policy failoverv1alpha1.FailoverPolicy
		sets   []clusterv1beta2.ManagedClusterSet
		want   metav1.Condition
	}{
		"the set exists": {policy: policy("p", "gpus", 5, 20, 30), sets: []clusterv1beta2.ManagedClusterSet{set("gpus")},
			want: metav1.Condition{Type: ConditionApplied, Status: metav1.ConditionTrue, Reason: "SetFound",
				Message: "applies to the 0 clusters of ManagedClusterSet gpus"}},
		"no set": {policy: policy("p", "gpus", 5, 20, 30),
			want: metav1.Condition{Type: ConditionApplied, Status: metav1.ConditionFalse, Reason: "SetNotFound",
				Message: "spec.clusterSet: ManagedClusterSet gpus does not exist: create it, or name an existing set"}},
		// Stored before the API server had the rule, so the hub ignores it: the status says so.
		"a fence that rises between renewals": {policy: policy("p", "gpus", 10, 5, 30), sets: []clusterv1beta2.ManagedClusterSet{set("gpus")},
			want: metav1.Condition{Type: ConditionApplied, Status: metav1.ConditionFalse, Reason: "InvalidTiming",
				Message: "spec: fence after (5s) must be at least 2 leases (10s each), or it rises between the renewals of a healthy cluster " +
					"and stops its fenced workloads; the hub applies this policy to no cluster: change its durations so that the API server takes them"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs := []client.Object{tc.policy.DeepCopy()}
			for i := range tc.sets {
				objs = append(objs, tc.sets[i].DeepCopy())
			}
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).
				WithStatusSubresource(&failoverv1alpha1.FailoverPolicy{}).Build()
			r := &PolicyReconciler{Client: c, Clock: clocktesting.NewFakePassiveClock(time.Unix(0, 0))}
			if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Name: tc.policy.Name}}); err != nil {
				t.Fatal(err)
			}
			got := &failoverv1alpha1.FailoverPolicy{}
			if err := c.Get(context.Background(), client.ObjectKey{Name: tc.policy.Name}, got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]metav1.Condition{tc.want}, got.Status.Conditions, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}
