package managedserviceaccount

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/flotilla/flotilla/api/scheme"
)

// TestKeepBindingLeavesOthersAlone: a RoleBinding of the hub's name that the hub did not make
// (no builtinaddon label) is neither rebound nor deleted, whether the namespace wants the
// agents' binding or not; the hub's own is made and removed.
func TestKeepBindingLeavesOthersAlone(t *testing.T) {
	theirs := func() *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: TokenBinding},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}}
	}
	ctx := context.Background()
	for name, want := range map[string]bool{"the namespace wants the binding": true, "the namespace wants none": false} {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(theirs()).Build()
			err := (&Reconciler{Client: c}).keepBinding(ctx, "cluster1", want)
			if want && (err == nil || !strings.Contains(err.Error(), "was not made by the hub")) {
				t.Errorf("keepBinding over another's RoleBinding: %v, want an error saying so", err)
			}
			if !want && err != nil {
				t.Errorf("keepBinding: %v", err)
			}
			got := &rbacv1.RoleBinding{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: TokenBinding}, got); err != nil {
				t.Fatalf("the other RoleBinding is gone: %v", err)
			}
			if diff := cmp.Diff(theirs().Subjects, got.Subjects); diff != "" || got.RoleRef != theirs().RoleRef {
				t.Errorf("the other RoleBinding changed: roleRef %+v, subjects (-want +got):\n%s", got.RoleRef, diff)
			}
		})
	}
	t.Run("the hub's own: made, then removed", func(t *testing.T) {
		c := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
		r := &Reconciler{Client: c}
		if err := r.keepBinding(ctx, "cluster1", true); err != nil {
			t.Fatal(err)
		}
		got := &rbacv1.RoleBinding{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: TokenBinding}, got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"system:open-cluster-management:cluster1"}, []string{got.Subjects[0].Name}); diff != "" {
			t.Errorf("subjects (-want +got):\n%s", diff)
		}
		if err := r.keepBinding(ctx, "cluster1", false); err != nil {
			t.Fatal(err)
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: TokenBinding}, got); err == nil {
			t.Error("the hub's binding stayed after the last ManagedServiceAccount went")
		}
	})
}
