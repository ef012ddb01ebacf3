package charts

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla/flotilla/config/rbac"
)

// The hub chart makes flower-system and grants the hub the generated flower Role there, bound to
// the hub's ServiceAccount; flowerAddon.enabled=false makes neither. Its other values are flags.
func TestHubFlowerAddon(t *testing.T) {
	in := func(objs []*unstructured.Unstructured, kind, ns string) []*unstructured.Unstructured {
		var out []*unstructured.Unstructured
		for _, o := range objs {
			if o.GetKind() == kind && (o.GetNamespace() == ns || (kind == "Namespace" && o.GetName() == ns)) {
				out = append(out, o)
			}
		}
		return out
	}
	on := renderChart(t, Hub, Release{Name: "flotilla", Namespace: "ocm-hub"}, nil)
	want, err := rbac.FlowerRole()
	if err != nil {
		t.Fatal(err)
	}
	roles := in(on.Objects, "Role", rbac.FlowerNamespace)
	if len(roles) != 1 {
		t.Fatalf("%d Roles in %s, want 1", len(roles), rbac.FlowerNamespace)
	}
	got := find[rbacv1.Role](t, roles, "Role", "flotilla-hub")
	if diff := cmp.Diff(want.Rules, got.Rules); diff != "" {
		t.Errorf("flower Role rules differ from config/rbac (-want +got):\n%s", diff)
	}
	rb := find[rbacv1.RoleBinding](t, in(on.Objects, "RoleBinding", rbac.FlowerNamespace), "RoleBinding", "flotilla-hub")
	wantSubjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "flotilla-hub", Namespace: "ocm-hub"}}
	if diff := cmp.Diff(wantSubjects, rb.Subjects); diff != "" || rb.RoleRef.Kind != "Role" || rb.RoleRef.Name != "flotilla-hub" {
		t.Errorf("RoleBinding to %s %s, subjects (-want +got):\n%s", rb.RoleRef.Kind, rb.RoleRef.Name, diff)
	}
	if len(in(on.Objects, "Namespace", rbac.FlowerNamespace)) != 1 {
		t.Errorf("no Namespace %s rendered", rbac.FlowerNamespace)
	}

	off := renderChart(t, Hub, Release{Name: "flotilla", Namespace: "ocm-hub"}, map[string]any{
		"flowerAddon": map[string]any{"enabled": false, "superlinkAddress": "10.0.0.5:30092", "tls": false}})
	for _, kind := range []string{"Namespace", "Role", "RoleBinding"} {
		if n := len(in(off.Objects, kind, rbac.FlowerNamespace)); n != 0 {
			t.Errorf("flowerAddon.enabled=false renders %d %s in %s", n, kind, rbac.FlowerNamespace)
		}
	}
	hub := find[appsv1.Deployment](t, off.Objects, "Deployment", "flotilla-hub").Spec.Template.Spec.Containers[0]
	flower := slices.DeleteFunc(slices.Clone(hub.Args), func(a string) bool { return !strings.HasPrefix(a, "--flower-") })
	// The front beside each federation's own SuperLink runs the hub's own image.
	if diff := cmp.Diff([]string{"--flower-superlink-address=10.0.0.5:30092", "--flower-tls=false", "--flower-front-image=" + hub.Image}, flower); diff != "" {
		t.Errorf("flower flags (-want +got):\n%s", diff)
	}
}
