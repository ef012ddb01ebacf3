package install

import (
	"context"
	"fmt"
	"slices"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
)

// MigrateStorage moves every object of CRD name to the CRD's storage version when etcd may still
// hold some in another (status.storedVersions lists more than the storage version, as after an
// upgrade that changed it): it writes each object back unchanged, which the API server stores
// in the storage version, then sets storedVersions to the storage version alone, so that a
// later release can stop serving the old one. It returns how many objects it rewrote; a CRD
// with nothing to migrate costs one read.
func MigrateStorage(ctx context.Context, cfg *rest.Config, name string) (int, error) {
	cs, err := apiextclient.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	crds := cs.ApiextensionsV1().CustomResourceDefinitions()
	crd, err := crds.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return 0, fmt.Errorf("reading CRD %s: %w", name, err)
	}
	storage := storageVersion(crd)
	if storage == "" || slices.Equal(crd.Status.StoredVersions, []string{storage}) {
		return 0, nil
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	ri := dyn.Resource(schema.GroupVersionResource{Group: crd.Spec.Group, Version: storage, Resource: crd.Spec.Names.Plural})
	list, err := ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("listing %s to migrate them to %s: %w", name, storage, err)
	}
	n := 0
	for i := range list.Items {
		o := &list.Items[i]
		var res dynamic.ResourceInterface = ri
		if ns := o.GetNamespace(); ns != "" {
			res = ri.Namespace(ns)
		}
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := res.Get(ctx, o.GetName(), metav1.GetOptions{})
			if err != nil {
				return err
			}
			_, err = res.Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if apierrors.IsNotFound(err) {
			continue // deleted meanwhile: nothing left to migrate
		}
		if err != nil {
			return n, fmt.Errorf("rewriting %s %s/%s in %s: %w", name, o.GetNamespace(), o.GetName(), storage, err)
		}
		n++
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd, err := crds.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		crd.Status.StoredVersions = []string{storage}
		_, err = crds.UpdateStatus(ctx, crd, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return n, fmt.Errorf("recording that CRD %s is stored in %s only: %w", name, storage, err)
	}
	return n, nil
}

func storageVersion(crd *apiextv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}
