package get

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/apitest"
)

// now is the fake clock's time in every test.
var now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// ago is a creation timestamp d before now.
func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

func condition(typ string, s metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: typ, Status: s, Reason: "Test", LastTransitionTime: ago(time.Minute)}
}

// healthy are the conditions of a joined and available cluster.
func healthy() []metav1.Condition {
	return []metav1.Condition{
		condition(clusterv1.ManagedClusterConditionJoined, metav1.ConditionTrue),
		condition(clusterv1.ManagedClusterConditionAvailable, metav1.ConditionTrue),
	}
}

// empty is a set's ClusterSetEmpty condition.
func empty(s metav1.ConditionStatus) metav1.Condition {
	return condition(clusterv1beta2.ManagedClusterSetConditionEmpty, s)
}

// bound is a binding's Bound condition.
func bound(s metav1.ConditionStatus) metav1.Condition {
	return condition(clusterv1beta2.ClusterSetBindingBoundType, s)
}

// makeCluster is a cluster created age ago.
func makeCluster(name string, age time.Duration) *apitest.ClusterWrapper {
	return apitest.MakeCluster(name).Created(now.Add(-age))
}

// makeSet is a set created age ago that selects by the clusterset label.
func makeSet(name string, age time.Duration) *apitest.ClusterSetWrapper {
	return apitest.MakeClusterSet(name).Created(now.Add(-age))
}

// makeBinding binds set in namespace, created age ago; the binding is named after the set.
func makeBinding(namespace, set string, age time.Duration) *apitest.ClusterSetBindingWrapper {
	return apitest.MakeClusterSetBinding(namespace, set).Created(now.Add(-age))
}
