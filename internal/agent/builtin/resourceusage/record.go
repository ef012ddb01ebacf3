package resourceusage

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	resourcehelper "k8s.io/component-helpers/resource"
)

// podRecord is all the add-on keeps of a pod: its name, its node and, while it counts (bound to
// a node and not finished), its requests summed as the scheduler sums them (init containers,
// sidecars and overhead). It is a few hundred bytes where a pod is kilobytes: the reflector
// holds one per pod while it streams the first list of a large cluster.
type podRecord struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	node     string
	requests []request
}

var _ runtime.Object = (*podRecord)(nil)

// DeepCopyObject implements runtime.Object.
func (r *podRecord) DeepCopyObject() runtime.Object {
	c := *r
	r.DeepCopyInto(&c.ObjectMeta)
	c.requests = slices.Clone(r.requests)
	return &c
}

// trimPod is the pod reflector's transform: a pod becomes its record.
func trimPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil // a record already, or a deleted object's last state
	}
	return recordOf(p), nil
}

func recordOf(p *corev1.Pod) *podRecord {
	r := &podRecord{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}, node: p.Spec.NodeName}
	if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return r
	}
	for name, q := range resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}) {
		r.requests = append(r.requests, request{name: name, amount: amountOf(name, &q)})
	}
	return r
}
