//go:build integration

package install

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	"github.com/flotilla/flotilla/internal/hub/addontemplate"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// ocmManager is the user OCM add-ons grant their agents' hub roles to.
const ocmManager = "system:serviceaccount:open-cluster-management-hub:addon-manager-controller-sa"

// ocmAddOn applies a template add-on as OCM add-ons ship it in their deploy/ folder: a ClusterRole
// <addon>-agent with the agent's hub rules, a ClusterRoleBinding granting it to OCM's add-on
// manager ServiceAccount (unless granted is false), an AddOnTemplate whose kubeClient registration
// asks for it in the cluster's namespace (CurrentCluster), and a ClusterManagementAddOn using the
// template. The role reads ConfigMaps and the resource given, which the hub's own roles must not
// hold (Secrets, Services), so that the hub cannot bind the role as itself.
func ocmAddOn(t *testing.T, c client.Client, addon, resource string, granted bool) {
	t.Helper()
	role := addon + "-agent"
	objs := []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{""}, Resources: []string{resource}, Verbs: []string{"get"}},
		}},
		&addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: addon + "-0.1.0"},
			Spec: addonv1alpha1.AddOnTemplateSpec{AddonName: addon,
				Registration: []addonv1alpha1.RegistrationSpec{{Type: addonv1alpha1.RegistrationTypeKubeClient,
					KubeClient: &addonv1alpha1.KubeClientRegistrationConfig{HubPermissions: []addonv1alpha1.HubPermissionConfig{{
						Type:           addonv1alpha1.HubPermissionsBindingCurrentCluster,
						CurrentCluster: &addonv1alpha1.CurrentClusterBindingConfig{ClusterRoleName: role},
					}}}}}}},
		&addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: addon},
			Spec: addonv1alpha1.ClusterManagementAddOnSpec{
				InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.InstallStrategyManual},
				SupportedConfigs: []addonv1alpha1.ConfigMeta{{
					ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: "addontemplates"},
					DefaultConfig:       &addonv1alpha1.ConfigReferent{Name: addon + "-0.1.0"},
				}},
			}},
	}
	if granted {
		objs = append(objs, managerGrant(addon))
	}
	for _, o := range objs {
		testenv.Create(t, c, o)
	}
}

// managerGrant is the ClusterRoleBinding of an OCM add-on's deploy manifests that lets OCM's add-on
// manager bind the agent's role.
func managerGrant(addon string) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: addon + "-addon-manager"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: addon + "-agent"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "open-cluster-management-hub", Name: "addon-manager-controller-sa"}}}
}

// agentBinding waits until the add-on's CurrentCluster RoleBinding binds its agents' group to
// <addon>-agent in the cluster's namespace.
func agentBinding(t *testing.T, c client.Client, addon string) {
	t.Helper()
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: addon + "-agent"}
	key := client.ObjectKey{Namespace: clusterName, Name: addontemplate.BindingName(addon, clusterName, clusterName, ref)}
	testenv.WaitFor(t, 60*time.Second, "RoleBinding "+key.String(), func(ctx context.Context) (bool, string, error) {
		b := &rbacv1.RoleBinding{}
		if err := c.Get(ctx, key, b); err != nil {
			return false, addOnState(ctx, c, addon), client.IgnoreNotFound(err)
		}
		want := []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: clusteridentity.AddOnClusterGroup(clusterName, addon)}}
		if b.RoleRef != ref || fmt.Sprint(b.Subjects) != fmt.Sprint(want) {
			return false, "", fmt.Errorf("RoleBinding %s binds %v to %v, want %v to %v", key, b.Subjects, b.RoleRef, want, ref)
		}
		return true, "", nil
	})
}

// addOnState is the add-on's RegistrationApplied condition, for waits' messages.
func addOnState(ctx context.Context, c client.Client, addon string) string {
	m := &addonv1alpha1.ManagedClusterAddOn{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: clusterName, Name: addon}, m); err != nil {
		return err.Error()
	}
	if cond := meta.FindStatusCondition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnRegistrationApplied); cond != nil {
		return fmt.Sprintf("RegistrationApplied=%s/%s: %s", cond.Status, cond.Reason, cond.Message)
	}
	return fmt.Sprintf("no RegistrationApplied yet (conditions %+v)", m.Status.Conditions)
}

// TestOCMAddOnRBAC installs the hub chart and runs the hub with only its ServiceAccount, then
// applies OCM-style template add-ons whose agents' hub roles are granted, as OCM's deploy manifests
// do, to OCM's add-on manager ServiceAccount and not to the hub. The hub binds them acting as that
// ServiceAccount (--addon-manager-identity, set by the chart): the agent's group gets the role in
// its cluster's namespace and the API server then lets the agent read what the role says. An
// add-on whose role was not granted is not bound, and its ManagedClusterAddOn says which grant is
// missing; making the grant binds it without touching the add-on.
//
// With the chart's addonManagerIdentity.enabled=false (the hub binds as itself) the first add-on
// fails too: RegistrationApplied=False, "the hub may not bind ClusterRole ocm-granted-agent: it
// holds neither its permissions nor bind on it".
func TestOCMAddOnRBAC(t *testing.T) {
	f := installFleet(t, nil)
	admin := f.admin
	ctx := context.Background()

	// An add-on whose deploy manifests grant its role to OCM's add-on manager.
	const granted = "ocm-granted"
	ocmAddOn(t, admin, granted, "secrets", true)
	enableAddOn(t, admin, granted)
	agentBinding(t, admin, granted)
	// The agent's certificate identity may now read the cluster namespace's Secrets, and only there.
	// The API server's authorizer reads RoleBindings from its own informer, so the new binding
	// takes effect a moment after it is stored: wait for the allowed answer, then ask about the
	// namespace it must not reach (by then the authorizer has seen the binding).
	agentMay := func(ctx context.Context, ns string) (*authorizationv1.SubjectAccessReview, error) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: clusteridentity.AddOnUser(clusterName, granted, addontemplate.AgentName(granted)), Groups: clusteridentity.AddOnGroups(clusterName, granted),
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "get", Resource: "secrets"}}}
		return f.hub.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	}
	testenv.WaitFor(t, 30*time.Second, "add-on "+granted+"'s agent may get Secrets in "+clusterName, func(ctx context.Context) (bool, string, error) {
		got, err := agentMay(ctx, clusterName)
		if err != nil {
			return false, "", err
		}
		return got.Status.Allowed, "allowed=false " + got.Status.Reason, nil
	})
	if got, err := agentMay(ctx, "default"); err != nil {
		t.Fatal(err)
	} else if got.Status.Allowed {
		t.Errorf("add-on %s's agent may get Secrets in default (%s): its role reaches beyond its cluster's namespace", granted, got.Status.Reason)
	}
	// The hub itself still may not read Secrets: it bound what it does not hold, as the add-on manager.
	hubSAR := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "system:serviceaccount:" + hubNamespace + ":flotilla-hub", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + hubNamespace},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: clusterName, Verb: "get", Resource: "secrets"}}}
	if got, err := f.hub.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, hubSAR, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	} else if got.Status.Allowed {
		t.Errorf("the hub's ServiceAccount may get Secrets in %s: the chart grants it more than its generated roles", clusterName)
	}

	// An add-on whose role nobody granted to OCM's add-on manager: refused, with the fix. (The API
	// server compares rules, not role names: a role within what the manager was granted for other
	// add-ons would be bound. Services are in no other add-on's role.)
	const ungranted = "ocm-ungranted"
	ocmAddOn(t, admin, ungranted, "services", false)
	enableAddOn(t, admin, ungranted)
	wantMsg := "spec.registration[0].kubeClient.hubPermissions[0].currentCluster.clusterRoleName: the add-on manager identity " + ocmManager +
		" may not bind ClusterRole ocm-ungranted-agent: it does not hold the role's permissions; grant ClusterRole ocm-ungranted-agent to " + ocmManager +
		" (a ClusterRoleBinding), as OCM add-ons' deploy manifests do"
	testenv.WaitFor(t, 60*time.Second, "add-on "+ungranted+" RegistrationApplied=False naming the missing grant", func(ctx context.Context) (bool, string, error) {
		state := addOnState(ctx, admin, ungranted)
		return strings.Contains(state, "RegistrationApplied=False/"+addontemplate.ReasonSetPermissionFailed) && strings.Contains(state, wantMsg), state, nil
	})
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ungranted + "-agent"}
	err := admin.Get(ctx, client.ObjectKey{Namespace: clusterName, Name: addontemplate.BindingName(ungranted, clusterName, clusterName, ref)}, &rbacv1.RoleBinding{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("add-on %s's role was bound without the add-on manager holding it (get: %v)", ungranted, err)
	}

	// The administrator applies the missing grant: the hub binds the role, nothing else changed.
	testenv.Create(t, admin, managerGrant(ungranted))
	agentBinding(t, admin, ungranted)
	testenv.WaitFor(t, 30*time.Second, "add-on "+ungranted+" RegistrationApplied=True", func(ctx context.Context) (bool, string, error) {
		state := addOnState(ctx, admin, ungranted)
		return strings.HasPrefix(state, "RegistrationApplied=True"), state, nil
	})
}

// enableAddOn enables the add-on on the cluster (a ManagedClusterAddOn, deleted at the end).
func enableAddOn(t *testing.T, c client.Client, addon string) {
	t.Helper()
	m := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: addon}}
	testenv.Create(t, c, m)
}
