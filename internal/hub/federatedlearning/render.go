package federatedlearning

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/hub/addon"
)

// Labels on what the controller makes.
const (
	// NameLabel names the FederatedLearning (in the same namespace, or in NamespaceLabel's for
	// ManifestWorks in cluster namespaces) an object belongs to.
	NameLabel = "federation-ai.flotilla.io/federated-learning"
	// NamespaceLabel is the FederatedLearning's namespace, on ManifestWorks in cluster namespaces.
	NamespaceLabel = "federation-ai.flotilla.io/federated-learning-namespace"
	// UIDLabel is the FederatedLearning's UID on ManifestWorks in cluster namespaces: the
	// controller deletes or updates only works that carry its own.
	UIDLabel = "federation-ai.flotilla.io/federated-learning-uid"
	// ComponentLabel is serverapp, clientapp, server or client.
	ComponentLabel = "federation-ai.flotilla.io/component"
	// FlowerAddOn is the add-on that runs Flower's SuperLink and SuperNodes.
	FlowerAddOn = "flower-addon"
)

// Finalizer holds a FederatedLearning until its ManifestWorks in cluster namespaces are gone: an
// owner reference cannot cross namespaces.
const Finalizer = "federation-ai.flotilla.io/cleanup"

func labels(fl *flv1alpha1.FederatedLearning, component string) map[string]string {
	l := map[string]string{NameLabel: fl.Name}
	if component != "" {
		l[ComponentLabel] = component
	}
	return l
}

// owned makes the FederatedLearning the controller of an object in its namespace.
func owned(fl *flv1alpha1.FederatedLearning, component string) metav1.ObjectMeta {
	t, f := true, true
	return metav1.ObjectMeta{
		Name: "", Namespace: fl.Namespace, Labels: labels(fl, component),
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: flv1alpha1.GroupVersion.String(), Kind: "FederatedLearning", Name: fl.Name, UID: fl.UID,
			Controller: &t, BlockOwnerDeletion: &f,
		}},
	}
}

// desiredPlacement is spec.client.placement; for Flower, every predicate also requires that
// flower-addon is available on the cluster, so that no client goes where no SuperNode runs.
func desiredPlacement(fl *flv1alpha1.FederatedLearning) *clusterv1beta1.Placement {
	p := &clusterv1beta1.Placement{ObjectMeta: owned(fl, "")}
	p.Name = fl.Name
	fl.Spec.Client.Placement.DeepCopyInto(&p.Spec)
	if framework(&fl.Spec) == flv1alpha1.FrameworkFlower {
		req := metav1.LabelSelectorRequirement{Key: addon.FeatureLabelPrefix + FlowerAddOn, Operator: metav1.LabelSelectorOpIn, Values: []string{"available"}}
		if len(p.Spec.Predicates) == 0 {
			p.Spec.Predicates = []clusterv1beta1.ClusterPredicate{{}}
		}
		for i := range p.Spec.Predicates {
			ls := &p.Spec.Predicates[i].RequiredClusterSelector.LabelSelector
			if !hasRequirement(ls, req) {
				ls.MatchExpressions = append(ls.MatchExpressions, req)
			}
		}
	}
	return p
}

func hasRequirement(ls *metav1.LabelSelector, req metav1.LabelSelectorRequirement) bool {
	if ls.MatchLabels[req.Key] == "available" {
		return true
	}
	for _, e := range ls.MatchExpressions {
		if e.Key == req.Key && e.Operator == req.Operator && len(e.Values) == 1 && e.Values[0] == req.Values[0] {
			return true
		}
	}
	return false
}

// desiredBindings binds each set spec.client.placement names into the FederatedLearning's
// namespace, as OCM's controller does.
func desiredBindings(fl *flv1alpha1.FederatedLearning) []*clusterv1beta2.ManagedClusterSetBinding {
	var out []*clusterv1beta2.ManagedClusterSetBinding
	for _, set := range fl.Spec.Client.Placement.ClusterSets {
		b := &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: owned(fl, "")}
		b.Name, b.Spec.ClusterSet = set, set
		out = append(out, b)
	}
	return out
}

// manifest wraps an object for a ManifestWork, with its apiVersion and kind.
func manifest(gvk schema.GroupVersionKind, obj runtime.Object) workv1.Manifest {
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	raw, err := json.Marshal(obj)
	if err != nil {
		panic(err) // typed API objects always marshal
	}
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
}

// clusterWork is a ManifestWork in a cluster's namespace that carries the FederatedLearning's
// labels and UID.
func clusterWork(fl *flv1alpha1.FederatedLearning, name, cluster, component string, manifests ...workv1.Manifest) *workv1.ManifestWork {
	l := labels(fl, component)
	l[NamespaceLabel], l[UIDLabel] = fl.Namespace, string(fl.UID)
	return &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster, Labels: l},
		Spec:       workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: manifests}},
	}
}

// dataConfigMap holds a client cluster's data path.
func dataConfigMap(fl *flv1alpha1.FederatedLearning, namespace, path string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: dataConfigMapName(fl), Namespace: namespace, Labels: labels(fl, "client")},
		Data:       map[string]string{DataPathKey: path},
	}
}
