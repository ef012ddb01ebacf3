package clusterset

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

func (w *setWrapper) selectorType(t clusterv1beta2.SelectorType) *setWrapper {
	w.Spec.ClusterSelector.SelectorType = t
	return w
}

func (w *setWrapper) labelSelector(ls *metav1.LabelSelector) *setWrapper {
	w.Spec.ClusterSelector.SelectorType = clusterv1beta2.LabelSelector
	w.Spec.ClusterSelector.LabelSelector = ls
	return w
}

func (w *setWrapper) obj() clusterv1beta2.ManagedClusterSet { return w.ManagedClusterSet }
