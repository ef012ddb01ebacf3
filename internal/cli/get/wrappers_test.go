package get

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
)

// now is the fake clock's time in every test.
var now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// ago is a creation timestamp d before now.
func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

func condition(typ string, s metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: typ, Status: s, Reason: "Test", LastTransitionTime: ago(time.Minute)}
}

type clusterWrapper struct{ clusterv1.ManagedCluster }

func makeCluster(name string, age time.Duration) *clusterWrapper {
	return &clusterWrapper{clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: ago(age)}}}
}

func (w *clusterWrapper) accepted() *clusterWrapper {
	w.Spec.HubAcceptsClient = true
	return w
}

func (w *clusterWrapper) condition(typ string, s metav1.ConditionStatus) *clusterWrapper {
	w.Status.Conditions = append(w.Status.Conditions, condition(typ, s))
	return w
}

// healthy marks the cluster joined and available.
func (w *clusterWrapper) healthy() *clusterWrapper {
	return w.condition(clusterv1.ManagedClusterConditionJoined, metav1.ConditionTrue).
		condition(clusterv1.ManagedClusterConditionAvailable, metav1.ConditionTrue)
}

func (w *clusterWrapper) allocatable(name clusterv1.ResourceName, q string) *clusterWrapper {
	if w.Status.Allocatable == nil {
		w.Status.Allocatable = clusterv1.ResourceList{}
	}
	w.Status.Allocatable[name] = resource.MustParse(q)
	return w
}

func (w *clusterWrapper) claim(name, value string) *clusterWrapper {
	w.Status.ClusterClaims = append(w.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: name, Value: value})
	return w
}

// gpuClaim adds a model to the agent's models claim and its count claim, as the agent reports them.
func (w *clusterWrapper) gpuClaim(model, count string) *clusterWrapper {
	claims := w.Status.ClusterClaims
	for i := range claims {
		if claims[i].Name == clusterv1.GPUModelsClaim {
			claims[i].Value += "," + model
			return w.claim(clusterv1.GPUCountClaimName(model), count)
		}
	}
	return w.claim(clusterv1.GPUModelsClaim, model).claim(clusterv1.GPUCountClaimName(model), count)
}

func (w *clusterWrapper) obj() *clusterv1.ManagedCluster { return &w.ManagedCluster }

type setWrapper struct {
	clusterv1beta2.ManagedClusterSet
}

func makeSet(name string, age time.Duration) *setWrapper {
	return &setWrapper{clusterv1beta2.ManagedClusterSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: ago(age)},
		Spec: clusterv1beta2.ManagedClusterSetSpec{
			ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel},
		},
	}}
}

func (w *setWrapper) labelSelector(s *metav1.LabelSelector) *setWrapper {
	w.Spec.ClusterSelector = clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector, LabelSelector: s}
	return w
}

func (w *setWrapper) empty(s metav1.ConditionStatus) *setWrapper {
	w.Status.Conditions = append(w.Status.Conditions, condition(clusterv1beta2.ManagedClusterSetConditionEmpty, s))
	return w
}

func (w *setWrapper) obj() *clusterv1beta2.ManagedClusterSet { return &w.ManagedClusterSet }

type bindingWrapper struct {
	clusterv1beta2.ManagedClusterSetBinding
}

// makeBinding binds set in namespace; the binding is named after the set, as validation demands.
func makeBinding(namespace, set string, age time.Duration) *bindingWrapper {
	return &bindingWrapper{clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: set, CreationTimestamp: ago(age)},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set},
	}}
}

func (w *bindingWrapper) bound(s metav1.ConditionStatus) *bindingWrapper {
	w.Status.Conditions = append(w.Status.Conditions, condition(clusterv1beta2.ClusterSetBindingBoundType, s))
	return w
}

func (w *bindingWrapper) obj() *clusterv1beta2.ManagedClusterSetBinding {
	return &w.ManagedClusterSetBinding
}
