package addontemplate

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
)

func TestParseIdentity(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    *Identity
		wantErr string
	}{
		"none":         {in: ""},
		"OCM's":        {in: "open-cluster-management-hub/addon-manager-controller-sa", want: &Identity{Namespace: "open-cluster-management-hub", Name: "addon-manager-controller-sa"}},
		"no namespace": {in: "addon-manager-controller-sa", wantErr: "no namespace"},
		"bad name":     {in: "ns/Bad_Name", wantErr: "not a DNS subdomain"},
		"bad ns":       {in: "a.b/sa", wantErr: "not a DNS label"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseIdentity("--addon-manager-identity", tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "--addon-manager-identity") {
					t.Fatalf("error = %v, want one naming the flag and %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestGrantsIdentity(t *testing.T) {
	id := &Identity{Namespace: "open-cluster-management-hub", Name: "addon-manager-controller-sa"}
	cases := map[string]struct {
		id       *Identity
		subjects []rbacv1.Subject
		want     bool
	}{
		"service account": {id: id, want: true,
			subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "open-cluster-management-hub", Name: "addon-manager-controller-sa"}}},
		"user": {id: id, want: true,
			subjects: []rbacv1.Subject{{Kind: "User", Name: "system:serviceaccount:open-cluster-management-hub:addon-manager-controller-sa"}}},
		"same name elsewhere": {id: id,
			subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "default", Name: "addon-manager-controller-sa"}}},
		"no identity": {subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "open-cluster-management-hub", Name: "addon-manager-controller-sa"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := grantsIdentity(tc.id, tc.subjects); got != tc.want {
				t.Errorf("grantsIdentity = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestApplyBindingsAsIdentity: the hub reads with its own client and writes hubPermissions'
// bindings with the binder; what the API server refuses the binder is a problem that names the
// role and the fix.
func TestApplyBindingsAsIdentity(t *testing.T) {
	ctx := context.Background()
	id := &Identity{Namespace: "open-cluster-management-hub", Name: "addon-manager-controller-sa"}
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "spoke-1", Name: "gpu", UID: "u1"}}
	tmpl := templateOf([]addonv1alpha1.RegistrationSpec{{Type: addonv1alpha1.RegistrationTypeKubeClient,
		KubeClient: &addonv1alpha1.KubeClientRegistrationConfig{HubPermissions: []addonv1alpha1.HubPermissionConfig{{
			Type: addonv1alpha1.HubPermissionsBindingCurrentCluster, CurrentCluster: &addonv1alpha1.CurrentClusterBindingConfig{ClusterRoleName: "gpu-agent"}}}}}})
	const field = "spec.registration[0].kubeClient.hubPermissions[0].currentCluster.clusterRoleName: "
	escalation := apierrors.NewForbidden(rbacv1.Resource("rolebindings"), "b", errors.New(
		`user "system:serviceaccount:open-cluster-management-hub:addon-manager-controller-sa" (groups=["system:serviceaccounts"]) is attempting to grant RBAC permissions not currently held`))
	noImpersonation := apierrors.NewForbidden(rbacv1.Resource("serviceaccounts"), "addon-manager-controller-sa", errors.New(`cannot impersonate resource "serviceaccounts"`))
	cases := map[string]struct {
		identity     *Identity
		createErr    error
		wantProblems []string
		wantBound    bool
	}{
		"bound by the identity": {identity: id, wantBound: true},
		"the identity does not hold the role": {identity: id, createErr: escalation, wantProblems: []string{field +
			"the add-on manager identity system:serviceaccount:open-cluster-management-hub:addon-manager-controller-sa may not bind ClusterRole gpu-agent: " +
			"it does not hold the role's permissions; grant ClusterRole gpu-agent to system:serviceaccount:open-cluster-management-hub:addon-manager-controller-sa " +
			"(a ClusterRoleBinding), as OCM add-ons' deploy manifests do"}},
		"the hub may not act as the identity": {identity: id, createErr: noImpersonation, wantProblems: []string{field +
			"the hub, acting as system:serviceaccount:open-cluster-management-hub:addon-manager-controller-sa (--addon-manager-identity " +
			"open-cluster-management-hub/addon-manager-controller-sa), may not write RoleBinding spoke-1/open-cluster-management:gpu:clusterrole:gpu-agent:agent: " +
			noImpersonation.Error() + "; the hub needs impersonate on serviceaccounts \"addon-manager-controller-sa\" in namespace open-cluster-management-hub " +
			"and system:serviceaccount:open-cluster-management-hub:addon-manager-controller-sa needs rolebindings create, update and delete (the flotilla-hub chart grants both)"}},
		"the hub itself, refused": {createErr: escalation, wantProblems: []string{field +
			`the hub may not bind ClusterRole gpu-agent: it holds neither its permissions nor bind on it; grant the hub's identity verb bind on clusterroles "gpu-agent", or name another role`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			hub := fake.NewClientBuilder().WithScheme(scheme.Scheme).
				WithObjects(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "gpu-agent"}}).Build()
			writer := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithInterceptorFuncs(interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					if tc.createErr != nil {
						return tc.createErr
					}
					return c.Create(ctx, obj, opts...)
				}}).Build()
			r := &Reconciler{Client: hub, Identity: tc.identity, Binder: writer}
			if tc.identity == nil {
				// The hub binds as itself: its own client is the one refused.
				r.Binder, r.Client = nil, interceptor.NewClient(hub, interceptor.Funcs{
					Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
						return tc.createErr
					}})
			}
			problems, err := r.applyBindings(ctx, mca, tmpl)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantProblems, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			key := client.ObjectKey{Namespace: "spoke-1", Name: BindingName("gpu", "spoke-1", "spoke-1", rbacv1.RoleRef{Kind: "ClusterRole", Name: "gpu-agent"})}
			bound := writer.Get(ctx, key, &rbacv1.RoleBinding{}) == nil
			if bound != tc.wantBound {
				t.Errorf("bound by the binder = %v, want %v", bound, tc.wantBound)
			}
			if err := hub.Get(ctx, key, &rbacv1.RoleBinding{}); !apierrors.IsNotFound(err) {
				t.Errorf("the hub's own client wrote the binding (get: %v)", err)
			}
		})
	}
}
