package federatedlearning

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
)

// flWrapper builds FederatedLearnings for tests.
type flWrapper struct{ flv1alpha1.FederatedLearning }

func makeFL(name string) *flWrapper {
	return &flWrapper{flv1alpha1.FederatedLearning{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "fl", UID: "uid-1", Generation: 1},
		Spec: flv1alpha1.FederatedLearningSpec{
			Framework: flv1alpha1.FrameworkFlower,
			Server:    flv1alpha1.ServerSpec{Image: "server:1", Rounds: 3, MinAvailableClients: 2},
			Client:    flv1alpha1.ClientSpec{Image: "client:1"},
		},
	}}
}

func (w *flWrapper) framework(f flv1alpha1.Framework) *flWrapper { w.Spec.Framework = f; return w }
func (w *flWrapper) min(n int32) *flWrapper                      { w.Spec.Server.MinAvailableClients = n; return w }
func (w *flWrapper) claim(key string) *flWrapper {
	w.Spec.Client.Placement.Predicates = append(w.Spec.Client.Placement.Predicates, clusterv1beta1.ClusterPredicate{
		RequiredClusterSelector: clusterv1beta1.ClusterSelector{ClaimSelector: clusterv1beta1.ClusterClaimSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: metav1.LabelSelectorOpExists}},
		}},
	})
	return w
}
func (w *flWrapper) listener(t flv1alpha1.ListenerType, port int32) *flWrapper {
	w.Spec.Server.Listeners = append(w.Spec.Server.Listeners, flv1alpha1.ListenerSpec{Name: "grpc", Type: t, Port: port})
	return w
}
func (w *flWrapper) storage(t flv1alpha1.StorageType, name, path string) *flWrapper {
	w.Spec.Server.Storage = flv1alpha1.ModelStorageSpec{Type: t, Name: name, Path: path}
	return w
}
func (w *flWrapper) status(s flv1alpha1.FederatedLearningStatus) *flWrapper { w.Status = s; return w }
func (w *flWrapper) obj() *flv1alpha1.FederatedLearning                     { return &w.FederatedLearning }
