package apitest

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
)

// ClusterSetWrapper builds a ManagedClusterSet.
type ClusterSetWrapper struct {
	clusterv1beta2.ManagedClusterSet
}

// MakeClusterSet is a ManagedClusterSet that selects its clusters by the clusterset label
// (ExclusiveClusterSetLabel, as OCM defaults it), with no status.
func MakeClusterSet(name string) *ClusterSetWrapper {
	return &ClusterSetWrapper{clusterv1beta2.ManagedClusterSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
			SelectorType: clusterv1beta2.ExclusiveClusterSetLabel,
		}},
	}}
}

// Obj is a deep copy of the set built so far.
func (w *ClusterSetWrapper) Obj() *clusterv1beta2.ManagedClusterSet { return w.DeepCopy() }

// Generation sets the set's metadata.generation.
func (w *ClusterSetWrapper) Generation(g int64) *ClusterSetWrapper {
	w.ObjectMeta.Generation = g
	return w
}

// Created sets the set's creation time.
func (w *ClusterSetWrapper) Created(at time.Time) *ClusterSetWrapper {
	w.CreationTimestamp = metav1.NewTime(at)
	return w
}

// Finalizer adds finalizer f.
func (w *ClusterSetWrapper) Finalizer(f string) *ClusterSetWrapper {
	w.Finalizers = append(w.Finalizers, f)
	return w
}

// Deleting sets the deletion time to at; an API server (and the fake client) keeps a deleted
// object only while it has a Finalizer.
func (w *ClusterSetWrapper) Deleting(at time.Time) *ClusterSetWrapper {
	deleting(&w.ObjectMeta, at)
	return w
}

// SelectorType sets the selector type alone (an empty or unknown one included).
func (w *ClusterSetWrapper) SelectorType(t clusterv1beta2.SelectorType) *ClusterSetWrapper {
	w.Spec.ClusterSelector.SelectorType = t
	return w
}

// LabelSelector makes the set select its clusters by ls (nil included).
func (w *ClusterSetWrapper) LabelSelector(ls *metav1.LabelSelector) *ClusterSetWrapper {
	w.Spec.ClusterSelector.SelectorType = clusterv1beta2.LabelSelector
	w.Spec.ClusterSelector.LabelSelector = ls
	return w
}

// Condition adds status conditions as they are.
func (w *ClusterSetWrapper) Condition(c ...metav1.Condition) *ClusterSetWrapper {
	w.Status.Conditions = append(w.Status.Conditions, c...)
	return w
}

// ClusterSetBindingWrapper builds a ManagedClusterSetBinding.
type ClusterSetBindingWrapper struct {
	clusterv1beta2.ManagedClusterSetBinding
}

// MakeClusterSetBinding binds set to namespace; the binding is named after the set, as
// validation demands. It has no status (no Bound condition).
func MakeClusterSetBinding(namespace, set string) *ClusterSetBindingWrapper {
	return &ClusterSetBindingWrapper{clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: set},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set},
	}}
}

// Obj is a deep copy of the binding built so far.
func (w *ClusterSetBindingWrapper) Obj() *clusterv1beta2.ManagedClusterSetBinding {
	return w.DeepCopy()
}

// Generation sets the binding's metadata.generation.
func (w *ClusterSetBindingWrapper) Generation(g int64) *ClusterSetBindingWrapper {
	w.ObjectMeta.Generation = g
	return w
}

// Created sets the binding's creation time.
func (w *ClusterSetBindingWrapper) Created(at time.Time) *ClusterSetBindingWrapper {
	w.CreationTimestamp = metav1.NewTime(at)
	return w
}

// Finalizer adds finalizer f.
func (w *ClusterSetBindingWrapper) Finalizer(f string) *ClusterSetBindingWrapper {
	w.Finalizers = append(w.Finalizers, f)
	return w
}

// Deleting sets the deletion time to at; an API server (and the fake client) keeps a deleted
// object only while it has a Finalizer.
func (w *ClusterSetBindingWrapper) Deleting(at time.Time) *ClusterSetBindingWrapper {
	deleting(&w.ObjectMeta, at)
	return w
}

// Condition adds status conditions (such as clusterv1beta2.ClusterSetBindingBoundType) as they are.
func (w *ClusterSetBindingWrapper) Condition(c ...metav1.Condition) *ClusterSetBindingWrapper {
	w.Status.Conditions = append(w.Status.Conditions, c...)
	return w
}
