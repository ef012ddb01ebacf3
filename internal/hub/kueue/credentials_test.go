package kueue

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/contract/kueueworker"
)

// TestCredentialsLeaveOthersObjects: a Role, RoleBinding or Secret of the names the hub uses for a
// cluster's credentials, made by someone else (no ManagedLabel), is neither changed when the hub
// writes the credentials nor deleted when the cluster stops being a worker.
func TestCredentialsLeaveOthersObjects(t *testing.T) {
	theirs := []client.Object{
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: kueueworker.TokenRole("a")},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: kueueworker.TokenRole("a")},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "theirs"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: kueueworker.TokenSecret("a")},
			Data: map[string][]byte{"theirs": []byte("x")}},
	}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(theirs...).Build()
	cr := &CredentialsReconciler{Client: c, SecretReader: c, Namespace: DefaultNamespace, Source: SourceSecret}
	ctx := context.Background()
	owner := metav1.OwnerReference{APIVersion: "kueue.x-k8s.io/v1beta2", Kind: "MultiKueueCluster", Name: "a", UID: "u"}
	if err := cr.ensureTokenAccess(ctx, "a", owner); err != nil {
		t.Fatal(err)
	}
	if err := cr.remove(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	for _, want := range theirs {
		got := want.DeepCopyObject().(client.Object)
		if err := c.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil {
			t.Fatalf("%T %s: %v", want, want.GetName(), err)
		}
		// Unchanged objects keep their resource version: the fake client bumps it on a write.
		if got.GetResourceVersion() != want.GetResourceVersion() {
			t.Errorf("%T %s was written: resource version %s, was %s", want, want.GetName(), got.GetResourceVersion(), want.GetResourceVersion())
		}
		got.GetObjectKind().SetGroupVersionKind(want.GetObjectKind().GroupVersionKind())
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%T %s changed (-want +got):\n%s", want, want.GetName(), diff)
		}
	}
}
