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
	return r.write(ctx, ac, &kueuev1beta2.MultiKueueConfig{ObjectMeta: metav1.ObjectMeta{Name: name}}, func(o client.Object) bool {
		c := o.(*kueuev1beta2.MultiKueueConfig)
		same := slices.Equal(c.Spec.Clusters, clusters)
		c.Spec.Clusters = clusters
		return !same
	})
}

// writeCluster makes the MultiKueueCluster cluster point at its ClusterProfile or kubeconfig
// Secret (r.Source) and be owned by ac. It reports a clash, and changes nothing, when that object is not the hub's.
func (r *Reconciler) writeCluster(ctx context.Context, ac *kueuev1beta2.AdmissionCheck, cluster string) (clash bool, err error) {
	want := ClusterSpec(cluster, r.Source)
	return r.write(ctx, ac, &kueuev1beta2.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}, func(o client.Object) bool {
		c := o.(*kueuev1beta2.MultiKueueCluster)
		same := reflect.DeepEqual(c.Spec, want)
		c.Spec = want
		return !same
	})
}

// write creates obj (named, cluster-scoped) with its spec set by setSpec, labeled as the hub's
// and owned by ac, or, when it exists and is the hub's, adds ac to its owners and sets its spec,
// writing only when either changed. setSpec sets the spec and reports whether it changed. It
// reports a clash, and changes nothing, when the object is not the hub's.
func (r *Reconciler) write(ctx context.Context, ac *kueuev1beta2.AdmissionCheck, obj client.Object, setSpec func(client.Object) bool) (clash bool, err error) {
	kind, name := reflect.TypeOf(obj).Elem().Name(), obj.GetName()
	err = r.Client.Get(ctx, client.ObjectKey{Name: name}, obj)
	if apierrors.IsNotFound(err) {
		meta := newMeta(ac, name)
		obj.SetLabels(meta.Labels)
		obj.SetOwnerReferences(meta.OwnerReferences)
		setSpec(obj)
		if err := r.Client.Create(ctx, obj); err != nil {
			return false, fmt.Errorf("creating %s %s for AdmissionCheck %s: %w", kind, name, ac.Name, err)
		}
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !managed(obj) {
		return true, nil
	}
	refs, added := withOwner(obj.GetOwnerReferences(), ownerRef(ac))
	if changed := setSpec(obj); !added && !changed {
		return false, nil
	}
	obj.SetOwnerReferences(refs)
	if err := r.Client.Update(ctx, obj); err != nil {
		return false, fmt.Errorf("updating %s %s for AdmissionCheck %s: %w", kind, name, ac.Name, err)
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
