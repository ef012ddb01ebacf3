package clusterprofile

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
)

// deletedAt marks test objects as being deleted (a zero time would not).
var deletedAt = metav1.NewTime(time.Unix(1, 0))

// clusterWrapper builds test ManagedClusters.
type clusterWrapper struct{ clusterv1.ManagedCluster }

func makeCluster(name string) *clusterWrapper {
	return &clusterWrapper{clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}}
}

func (w *clusterWrapper) label(k, v string) *clusterWrapper {
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[k] = v
	return w
}

func (w *clusterWrapper) set(name string) *clusterWrapper {
	return w.label(clusterv1beta2.ClusterSetLabel, name)
}

func (w *clusterWrapper) version(v string) *clusterWrapper {
	w.Status.Version.Kubernetes = v
	return w
}

func (w *clusterWrapper) claim(name, value string) *clusterWrapper {
	w.Status.ClusterClaims = append(w.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: name, Value: value})
	return w
}

func (w *clusterWrapper) condition(typ string, status metav1.ConditionStatus, reason, message string) *clusterWrapper {
	w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: deletedAt, ObservedGeneration: 3,
	})
	return w
}

func (w *clusterWrapper) deleting() *clusterWrapper {
	w.DeletionTimestamp = &deletedAt
	w.Finalizers = []string{"test"}
	return w
}

func (w *clusterWrapper) obj() clusterv1.ManagedCluster { return w.ManagedCluster }

// setWrapper builds test ManagedClusterSets; a new one selects by the clusterset label.
type setWrapper struct {
	clusterv1beta2.ManagedClusterSet
}

func makeSet(name string) *setWrapper {
	return &setWrapper{clusterv1beta2.ManagedClusterSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
			SelectorType: clusterv1beta2.ExclusiveClusterSetLabel,
		}},
	}}
}

func (w *setWrapper) labelSelector(ls *metav1.LabelSelector) *setWrapper {
	w.Spec.ClusterSelector.SelectorType = clusterv1beta2.LabelSelector
	w.Spec.ClusterSelector.LabelSelector = ls
	return w
}

func (w *setWrapper) deleting() *setWrapper {
	w.DeletionTimestamp = &deletedAt
	w.Finalizers = []string{"test"}
	return w
}

func (w *setWrapper) obj() clusterv1beta2.ManagedClusterSet { return w.ManagedClusterSet }

// bindingWrapper builds test ManagedClusterSetBindings; a new one has no Bound condition.
type bindingWrapper struct {
	clusterv1beta2.ManagedClusterSetBinding
}

func makeBinding(ns, set string) *bindingWrapper {
	return &bindingWrapper{clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Name: set, Namespace: ns, Generation: 2},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set},
	}}
}

// bound gives the binding a Bound condition of the given status for its current generation.
func (w *bindingWrapper) bound(status metav1.ConditionStatus) *bindingWrapper {
	w.Status.Conditions = []metav1.Condition{{
		Type: clusterv1beta2.ClusterSetBindingBoundType, Status: status, Reason: "Test", ObservedGeneration: w.Generation,
	}}
	return w
}

// staleBound gives the binding a True Bound condition written for an earlier generation.
func (w *bindingWrapper) staleBound() *bindingWrapper {
	w.bound(metav1.ConditionTrue)
	w.Status.Conditions[0].ObservedGeneration = w.Generation - 1
	return w
}

func (w *bindingWrapper) deleting() *bindingWrapper {
	w.DeletionTimestamp = &deletedAt
	w.Finalizers = []string{"test"}
	return w
}

func (w *bindingWrapper) obj() clusterv1beta2.ManagedClusterSetBinding {
	return w.ManagedClusterSetBinding
}
