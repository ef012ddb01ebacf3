package clusterprofile

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/apitest"
)

// deletedAt marks test objects as being deleted (a zero time would not).
var deletedAt = metav1.NewTime(time.Unix(1, 0))

// cond is a cluster condition written at generation 3.
func cond(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: deletedAt, ObservedGeneration: 3,
	}
}

// makeSet is a set at generation 1 that selects by the clusterset label.
func makeSet(name string) *apitest.ClusterSetWrapper {
	return apitest.MakeClusterSet(name).Generation(1)
}

// bindingGeneration is the generation of every test binding.
const bindingGeneration = 2

// makeBinding is a binding at bindingGeneration with no Bound condition.
func makeBinding(ns, set string) *apitest.ClusterSetBindingWrapper {
	return apitest.MakeClusterSetBinding(ns, set).Generation(bindingGeneration)
}

// bound is a Bound condition of the given status for the binding's generation.
func bound(status metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{
		Type: clusterv1beta2.ClusterSetBindingBoundType, Status: status, Reason: "Test", ObservedGeneration: bindingGeneration,
	}
}

// staleBound is a True Bound condition written for an earlier generation of the binding.
func staleBound() metav1.Condition {
	c := bound(metav1.ConditionTrue)
	c.ObservedGeneration = bindingGeneration - 1
	return c
}
