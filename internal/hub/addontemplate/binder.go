package addontemplate

import (
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OCM's add-on manager runs as this ServiceAccount, and OCM add-ons' deploy manifests grant their
// agents' hub roles to it (a ClusterRoleBinding to
// system:serviceaccount:open-cluster-management-hub:addon-manager-controller-sa), so that it may
// bind them. The hub chart makes a ServiceAccount of that name, and the hub binds as it.
const (
	OCMManagerNamespace      = "open-cluster-management-hub"
	OCMManagerServiceAccount = "addon-manager-controller-sa"
)

// The hub may impersonate OCM's add-on manager ServiceAccount and no other, in its own namespace
// only (a Role: resourceNames of a ClusterRole would match the name in every namespace).
// +kubebuilder:rbac:groups="",namespace=open-cluster-management-hub,resources=serviceaccounts,verbs=impersonate,resourceNames=addon-manager-controller-sa

// Identity is the ServiceAccount the hub acts as when it writes the RoleBindings of add-ons'
// hubPermissions (--addon-manager-identity).
type Identity struct{ Namespace, Name string }

// ParseIdentity reads NAMESPACE/NAME, as --addon-manager-identity takes it; "" is no identity
// (the hub binds as itself).
func ParseIdentity(flag, s string) (*Identity, error) {
	if s == "" {
		return nil, nil
	}
	fail := func(why string) error {
		return fmt.Errorf("%s %q: %s; give NAMESPACE/NAME of a ServiceAccount, such as %s/%s, or nothing to bind as the hub itself",
			flag, s, why, OCMManagerNamespace, OCMManagerServiceAccount)
	}
	ns, name, ok := strings.Cut(s, "/")
	if !ok {
		return nil, fail("no namespace")
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return nil, fail("the namespace is not a DNS label: " + strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, fail("the ServiceAccount name is not a DNS subdomain: " + strings.Join(errs, "; "))
	}
	return &Identity{Namespace: ns, Name: name}, nil
}

// String is NAMESPACE/NAME.
func (id Identity) String() string { return id.Namespace + "/" + id.Name }

// User is the ServiceAccount's user name, system:serviceaccount:NAMESPACE:NAME.
func (id Identity) User() string { return "system:serviceaccount:" + id.Namespace + ":" + id.Name }

// NewBinder is a client that acts as id (no cache: it only writes). Only the user is
// impersonated: the API server then gives it the ServiceAccount's groups itself, and the hub
// needs `impersonate` on that ServiceAccount and nothing on groups.
func NewBinder(cfg *rest.Config, id Identity, scheme *runtime.Scheme, mapper meta.RESTMapper) (client.Client, error) {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: id.User()}
	b, err := client.New(c, client.Options{Scheme: scheme, Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("a client acting as ServiceAccount %s: %w", id, err)
	}
	return b, nil
}

// binder is the client that writes hubPermissions' RoleBindings.
func (r *Reconciler) binder() client.Client {
	if r.Binder != nil {
		return r.Binder
	}
	return r.Client
}

// refusedBinding says why the API server refused to write binding b (a Forbidden error), and
// what would fix it, for the add-on's RegistrationApplied condition.
func (r *Reconciler) refusedBinding(b *rbacv1.RoleBinding, err error) string {
	id := r.Identity
	if id == nil {
		return mayNotBind(b)
	}
	if !strings.Contains(err.Error(), "attempting to grant RBAC permissions not currently held") {
		// Not the role: the hub may not act as id, or id may not write RoleBindings.
		return fmt.Sprintf("the hub, acting as %s (--addon-manager-identity %s), may not write RoleBinding %s/%s: %v; "+
			"the hub needs impersonate on serviceaccounts %q in namespace %s and %s needs rolebindings create, update and delete "+
			"(the flotilla-hub chart grants both)", id.User(), id, b.Namespace, b.Name, err, id.Name, id.Namespace, id.User())
	}
	grant := fmt.Sprintf("ClusterRole %s to %s (a ClusterRoleBinding)", b.RoleRef.Name, id.User())
	if b.RoleRef.Kind == "Role" {
		grant = fmt.Sprintf("Role %s in namespace %s to %s (a RoleBinding there)", b.RoleRef.Name, b.Namespace, id.User())
	}
	return fmt.Sprintf("the add-on manager identity %s may not bind %s %s: it does not hold the role's permissions; grant %s, as OCM add-ons' deploy manifests do",
		id.User(), b.RoleRef.Kind, b.RoleRef.Name, grant)
}

// grantsIdentity says whether a ClusterRoleBinding or RoleBinding names id among its subjects,
// as its ServiceAccount or its user.
func grantsIdentity(id *Identity, subjects []rbacv1.Subject) bool {
	if id == nil {
		return false
	}
	for _, s := range subjects {
		switch {
		case s.Kind == rbacv1.ServiceAccountKind && s.Namespace == id.Namespace && s.Name == id.Name,
			s.Kind == rbacv1.UserKind && s.Name == id.User():
			return true
		}
	}
	return false
}
