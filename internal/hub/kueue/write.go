package kueue

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// meta is the metadata of an object the hub creates for ac.
func newMeta(ac *kueuev1beta2.AdmissionCheck, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Labels: map[string]string{ManagedLabel: ManagedValue},
		OwnerReferences: []metav1.OwnerReference{ownerRef(ac)}}
}

// writeConfig makes the MultiKueueConfig name list clusters and be owned by ac. It reports a
// clash, and changes nothing, when that config is not the hub's.
func (r *Reconciler) writeConfig(ctx context.Context, ac *kueuev1beta2.AdmissionCheck, name string, clusters []string) (clash bool, err error) {
	c := &kueuev1beta2.MultiKueueConfig{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, c); apierrors.IsNotFound(err) {
		c = &kueuev1beta2.MultiKueueConfig{ObjectMeta: newMeta(ac, name), Spec: kueuev1beta2.MultiKueueConfigSpec{Clusters: clusters}}
		if err := r.Client.Create(ctx, c); err != nil {
			return false, fmt.Errorf("creating MultiKueueConfig %s for AdmissionCheck %s: %w", name, ac.Name, err)
		}
		return false, nil
	} else if err != nil {
		return false, err
	}
	if !managed(c) {
		return true, nil
	}
	refs, added := withOwner(c.OwnerReferences, ownerRef(ac))
	if !added && slices.Equal(c.Spec.Clusters, clusters) {
		return false, nil
	}
	c = c.DeepCopy()
	c.OwnerReferences, c.Spec.Clusters = refs, clusters
	if err := r.Client.Update(ctx, c); err != nil {
		return false, fmt.Errorf("updating MultiKueueConfig %s for AdmissionCheck %s: %w", name, ac.Name, err)
	}
	return false, nil
}

// writeCluster makes the MultiKueueCluster cluster point at its kubeconfig Secret and be owned by
// ac. It reports a clash, and changes nothing, when that object is not the hub's.
func (r *Reconciler) writeCluster(ctx context.Context, ac *kueuev1beta2.AdmissionCheck, cluster string) (clash bool, err error) {
	want := ClusterSpec(cluster)
	c := &kueuev1beta2.MultiKueueCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: cluster}, c); apierrors.IsNotFound(err) {
		c = &kueuev1beta2.MultiKueueCluster{ObjectMeta: newMeta(ac, cluster), Spec: want}
		if err := r.Client.Create(ctx, c); err != nil {
			return false, fmt.Errorf("creating MultiKueueCluster %s for AdmissionCheck %s: %w", cluster, ac.Name, err)
		}
		return false, nil
	} else if err != nil {
		return false, err
	}
	if !managed(c) {
		return true, nil
	}
	refs, added := withOwner(c.OwnerReferences, ownerRef(ac))
	if !added && reflect.DeepEqual(c.Spec, want) {
		return false, nil
	}
	c = c.DeepCopy()
	c.OwnerReferences, c.Spec = refs, want
	if err := r.Client.Update(ctx, c); err != nil {
		return false, fmt.Errorf("updating MultiKueueCluster %s for AdmissionCheck %s: %w", cluster, ac.Name, err)
	}
	return false, nil
}

// release drops ac from obj's owners, a MultiKueueConfig or MultiKueueCluster of the hub's, and
// deletes obj when no check is left. obj is from the cache and is not changed.
func (r *Reconciler) release(ctx context.Context, ac *kueuev1beta2.AdmissionCheck, obj client.Object) error {
	kind := reflect.TypeOf(obj).Elem().Name()
	refs := withoutOwner(obj.GetOwnerReferences(), ac.UID)
	if len(refs) == 0 {
		uid, rv := obj.GetUID(), obj.GetResourceVersion()
		if err := r.Client.Delete(ctx, obj, client.Preconditions{UID: &uid, ResourceVersion: &rv}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %s %s, no longer wanted by AdmissionCheck %s: %w", kind, obj.GetName(), ac.Name, err)
		}
		return nil
	}
	obj = obj.DeepCopyObject().(client.Object)
	obj.SetOwnerReferences(refs)
	if err := r.Client.Update(ctx, obj); err != nil {
		return fmt.Errorf("updating %s %s, no longer wanted by AdmissionCheck %s: %w", kind, obj.GetName(), ac.Name, err)
	}
	return nil
}
