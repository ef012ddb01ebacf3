package kueuesetup

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/agent/builtin/kueuequeues"
	"github.com/flotilla/flotilla/internal/hub/kueue"
)

const (
	// HubFlavor is the hub ClusterQueue's one flavor: the hub has no nodes, only quota.
	HubFlavor = "hub-flavor"
	// QueueLabel puts a Job in a LocalQueue.
	QueueLabel = "kueue.x-k8s.io/queue-name"
)

// Hub returns the hub's objects for a placement named placement (in the Kueue namespace, made
// by the caller): the MultiKueue AdmissionCheck mkCheck whose config is the placement's, OCM's
// placement AdmissionCheck named after the placement, the flavor, the ClusterQueue with quota
// for gpus GPUs (and as much CPU and memory as any test needs), and the LocalQueue.
func Hub(placement, mkCheck string, gpus int64) []client.Object {
	quota := func(name corev1.ResourceName, q resource.Quantity) kueuev1beta2.ResourceQuota {
		return kueuev1beta2.ResourceQuota{Name: name, NominalQuota: q}
	}
	return []client.Object{
		&kueuev1beta2.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: mkCheck},
			Spec: kueuev1beta2.AdmissionCheckSpec{ControllerName: kueuev1beta2.MultiKueueControllerName,
				Parameters: &kueuev1beta2.AdmissionCheckParametersReference{APIGroup: kueuev1beta2.GroupVersion.Group, Kind: "MultiKueueConfig", Name: placement}}},
		&kueuev1beta2.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: placement},
			Spec: kueuev1beta2.AdmissionCheckSpec{ControllerName: kueue.ControllerName,
				Parameters: &kueuev1beta2.AdmissionCheckParametersReference{APIGroup: clusterv1beta1.GroupVersion.Group, Kind: "Placement", Name: placement}}},
		&kueuev1beta2.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: HubFlavor}},
		&kueuev1beta2.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: kueuequeues.ClusterQueueName},
			Spec: kueuev1beta2.ClusterQueueSpec{
				NamespaceSelector: &metav1.LabelSelector{},
				ResourceGroups: []kueuev1beta2.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, kueuequeues.GPUResource},
					Flavors: []kueuev1beta2.FlavorQuotas{{Name: HubFlavor, Resources: []kueuev1beta2.ResourceQuota{
						quota(corev1.ResourceCPU, resource.MustParse("100000")), quota(corev1.ResourceMemory, resource.MustParse("1000Ti")),
						quota(kueuequeues.GPUResource, *resource.NewQuantity(gpus, resource.DecimalSI))}}}}},
				AdmissionChecksStrategy: &kueuev1beta2.AdmissionChecksStrategy{AdmissionChecks: []kueuev1beta2.AdmissionCheckStrategyRule{{Name: kueuev1beta2.AdmissionCheckReference(mkCheck)}}},
			}},
		&kueuev1beta2.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: kueuequeues.LocalQueueNS, Name: kueuequeues.LocalQueueName},
			Spec: kueuev1beta2.LocalQueueSpec{ClusterQueue: kueuequeues.ClusterQueueName}},
	}
}
