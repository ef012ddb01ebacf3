//go:build integration

package api

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// parse decodes one YAML object.
func parse(t *testing.T, name, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatalf("%s: the test's YAML is not valid: %v", name, err)
	}
	return u
}

// resourceFor finds the dynamic client for an object's kind, in its namespace (default: ns).
func resourceFor(t *testing.T, dc dynamic.Interface, mapper meta.RESTMapper, u *unstructured.Unstructured, ns string) dynamic.ResourceInterface {
	t.Helper()
	gvk := u.GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatalf("no resource for %s: is its CRD installed? %v", gvk, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if u.GetNamespace() == "" {
			u.SetNamespace(ns)
		}
		return dc.Resource(m.Resource).Namespace(u.GetNamespace())
	}
	return dc.Resource(m.Resource)
}

// create creates u, and when u has a status writes it through the status subresource (status is
// ignored on create), returning what the server stored.
func create(ctx context.Context, r dynamic.ResourceInterface, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	got, err := r.Create(ctx, u, metav1.CreateOptions{FieldValidation: "Strict"})
	if err != nil {
		return nil, err
	}
	status, hasStatus := u.Object["status"]
	if !hasStatus {
		return got, nil
	}
	got.Object["status"] = status
	got, err = r.UpdateStatus(ctx, got, metav1.UpdateOptions{FieldValidation: "Strict"})
	if err != nil {
		// Leave nothing behind: the good twin of a refused status usually has the same name.
		_ = r.Delete(ctx, u.GetName(), metav1.DeleteOptions{})
		return nil, fmt.Errorf("writing status: %w", err)
	}
	return got, nil
}
