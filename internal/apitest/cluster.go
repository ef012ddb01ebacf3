package apitest

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
)

// ClusterWrapper builds a ManagedCluster.
type ClusterWrapper struct{ clusterv1.ManagedCluster }

// MakeCluster is a ManagedCluster with only its name: not accepted, in no set, with no status.
func MakeCluster(name string) *ClusterWrapper {
	return &ClusterWrapper{clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}}
}

// Obj is a deep copy of the cluster built so far.
func (w *ClusterWrapper) Obj() *clusterv1.ManagedCluster { return w.DeepCopy() }

// UID sets the cluster's UID.
func (w *ClusterWrapper) UID(uid types.UID) *ClusterWrapper {
	w.ObjectMeta.UID = uid
	return w
}

// Generation sets the cluster's metadata.generation.
func (w *ClusterWrapper) Generation(g int64) *ClusterWrapper {
	w.ObjectMeta.Generation = g
	return w
}

// Created sets the cluster's creation time.
func (w *ClusterWrapper) Created(at time.Time) *ClusterWrapper {
	w.CreationTimestamp = metav1.NewTime(at)
	return w
}

// Label sets label key to value.
func (w *ClusterWrapper) Label(key, value string) *ClusterWrapper {
	setLabel(&w.ObjectMeta, key, value)
	return w
}

// Annotation sets annotation key to value.
func (w *ClusterWrapper) Annotation(key, value string) *ClusterWrapper {
	setAnnotation(&w.ObjectMeta, key, value)
	return w
}

// ClusterSet puts the cluster in set name by the clusterset label (an empty name sets the label
// to "").
func (w *ClusterWrapper) ClusterSet(name string) *ClusterWrapper {
	return w.Label(clusterv1beta2.ClusterSetLabel, name)
}

// Finalizer adds finalizer f.
func (w *ClusterWrapper) Finalizer(f string) *ClusterWrapper {
	w.Finalizers = append(w.Finalizers, f)
	return w
}

// Deleting sets the deletion time to at; an API server (and the fake client) keeps a deleted
// object only while it has a Finalizer.
func (w *ClusterWrapper) Deleting(at time.Time) *ClusterWrapper {
	deleting(&w.ObjectMeta, at)
	return w
}

// Accepted sets spec.hubAcceptsClient.
func (w *ClusterWrapper) Accepted() *ClusterWrapper {
	w.Spec.HubAcceptsClient = true
	return w
}

// LeaseSeconds sets spec.leaseDurationSeconds.
func (w *ClusterWrapper) LeaseSeconds(s int32) *ClusterWrapper {
	w.Spec.LeaseDurationSeconds = s
	return w
}

// ClientConfig adds an address of the cluster's API server with its CA bundle.
func (w *ClusterWrapper) ClientConfig(url string, caBundle []byte) *ClusterWrapper {
	w.Spec.ManagedClusterClientConfigs = append(w.Spec.ManagedClusterClientConfigs, clusterv1.ClientConfig{URL: url, CABundle: caBundle})
	return w
}

// Taint adds taint key with effect, added at added.
func (w *ClusterWrapper) Taint(key string, effect clusterv1.TaintEffect, added time.Time) *ClusterWrapper {
	return w.Taints(clusterv1.Taint{Key: key, Effect: effect, TimeAdded: &metav1.Time{Time: added}})
}

// Taints adds taints as they are (a value, or no time added, included).
func (w *ClusterWrapper) Taints(t ...clusterv1.Taint) *ClusterWrapper {
	w.Spec.Taints = append(w.Spec.Taints, t...)
	return w
}

// Condition adds status conditions as they are.
func (w *ClusterWrapper) Condition(c ...metav1.Condition) *ClusterWrapper {
	w.Status.Conditions = append(w.Status.Conditions, c...)
	return w
}

// Claim adds a cluster claim name=value to the status, as the agent reports it.
func (w *ClusterWrapper) Claim(name, value string) *ClusterWrapper {
	w.Status.ClusterClaims = append(w.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: name, Value: value})
	return w
}

// GPUClaim adds model to the agent's GPU models claim (clusterv1.GPUModelsClaim, comma-separated)
// and its count claim, as the agent reports them.
func (w *ClusterWrapper) GPUClaim(model, count string) *ClusterWrapper {
	claims := w.Status.ClusterClaims
	for i := range claims {
		if claims[i].Name == clusterv1.GPUModelsClaim {
			claims[i].Value += "," + model
			return w.Claim(clusterv1.GPUCountClaimName(model), count)
		}
	}
	return w.Claim(clusterv1.GPUModelsClaim, model).Claim(clusterv1.GPUCountClaimName(model), count)
}

// Allocatable sets the status's allocatable quantity of resource name (a quantity such as "16").
func (w *ClusterWrapper) Allocatable(name clusterv1.ResourceName, quantity string) *ClusterWrapper {
	if w.Status.Allocatable == nil {
		w.Status.Allocatable = clusterv1.ResourceList{}
	}
	w.Status.Allocatable[name] = resource.MustParse(quantity)
	return w
}

// Version sets the Kubernetes version the status reports.
func (w *ClusterWrapper) Version(v string) *ClusterWrapper {
	w.Status.Version.Kubernetes = v
	return w
}
