package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/config/rbac"
	"github.com/flotilla/flotilla/internal/install"
)

// HubServiceAccount names the service account HubIdentity makes, in a namespace of the test's.
const HubServiceAccount = "flotilla-hub"

// HubIdentity returns a client configuration for the hub cluster that authenticates as a service
// account bound to the hub's generated roles (config/rbac) and nothing else: the ClusterRole, the
// flower Role in flower-system, and, when leaderElectionNamespace is not "", the leader election
// Role in that namespace; it creates the namespaces if missing. A hub manager started with it (hub.NewManager) shows that the roles are
// enough; a client made from it shows what they refuse.
//
// The service account lives in a namespace made for the test, and the bindings go when the test
// ends; the ClusterRole and Role stay, as an installation leaves them. The token lasts two hours.
// It returns once the API server's authorizer grants the account the roles.
func (e *Env) HubIdentity(t testing.TB, leaderElectionNamespace string) *rest.Config {
	t.Helper()
	ctx := context.Background()
	cs := e.Hub.Client
	cr, err := rbac.ClusterRole()
	if err != nil {
		t.Fatal(err)
	}
	if err := applyClusterRole(ctx, cs, cr); err != nil {
		t.Fatal(err)
	}
	// The role the hub binds for agents, as an installation makes it.
	if err := install.AgentRoles(ctx, e.Hub.RESTConfig()); err != nil {
		t.Fatal(err)
	}

	ns := e.Namespace(t, e.Hub)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: HubServiceAccount, Namespace: ns}}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating service account %s/%s: %v", ns, sa.Name, err)
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa.Name}}
	bindingName := rbac.Name + "-" + ns // one per test: the namespace is unique
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: bindingName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cr.Name},
		Subjects:   subjects,
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatalf("binding ClusterRole %s: %v", cr.Name, err)
	}
	t.Cleanup(func() {
		_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), bindingName, metav1.DeleteOptions{})
	})

	// The flower Role, in its namespace, as the hub chart installs it.
	flowerRole, err := rbac.FlowerRole()
	if err != nil {
		t.Fatal(err)
	}
	if err := bindRole(ctx, cs, flowerRole, bindingName, subjects); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.RbacV1().RoleBindings(flowerRole.Namespace).Delete(context.Background(), bindingName, metav1.DeleteOptions{})
	})

	if leaderElectionNamespace != "" {
		if err := bindLeaderElectionRole(ctx, cs, leaderElectionNamespace, bindingName, subjects); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cs.RbacV1().RoleBindings(leaderElectionNamespace).Delete(context.Background(), bindingName, metav1.DeleteOptions{})
		})
	}

	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64((2 * time.Hour).Seconds()))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("issuing a token for %s/%s: %v", ns, sa.Name, err)
	}
	// Only the server's address and authority from the administrator's configuration; the token
	// is the one credential.
	cfg := rest.AnonymousClientConfig(e.Hub.RESTConfig())
	cfg.BearerToken = tr.Status.Token

	self, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// RBAC reaches the authorizer through an informer: wait until the bindings count.
	checks := []authorizationv1.ResourceAttributes{{Verb: "watch", Group: "cluster.open-cluster-management.io", Resource: "managedclusters"}}
	if leaderElectionNamespace != "" {
		checks = append(checks, authorizationv1.ResourceAttributes{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: leaderElectionNamespace})
	}
	for _, a := range checks {
		WaitFor(t, 30*time.Second, fmt.Sprintf("service account %s/%s to be allowed to %s %s", ns, sa.Name, a.Verb, a.Resource),
			func(ctx context.Context) (bool, string, error) {
				r, err := self.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
					Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &a},
				}, metav1.CreateOptions{})
				if err != nil {
					return false, "", err
				}
				return r.Status.Allowed, fmt.Sprintf("allowed=%t reason=%q", r.Status.Allowed, r.Status.Reason), nil
			})
	}
	return cfg
}

// applyClusterRole creates cr or makes the one there match it.
func applyClusterRole(ctx context.Context, cs kubernetes.Interface, cr *rbacv1.ClusterRole) error {
	api := cs.RbacV1().ClusterRoles()
	got, err := api.Get(ctx, cr.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = api.Create(ctx, cr, metav1.CreateOptions{})
	} else if err == nil {
		got.Rules = cr.Rules
		_, err = api.Update(ctx, got, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("applying ClusterRole %s: %w", cr.Name, err)
	}
	return nil
}

// bindLeaderElectionRole puts the hub's leader election Role in namespace ns (made if missing) and
// binds it to subjects with a RoleBinding named binding.
func bindLeaderElectionRole(ctx context.Context, cs kubernetes.Interface, ns, binding string, subjects []rbacv1.Subject) error {
	role, err := rbac.LeaderElectionRole(ns)
	if err != nil {
		return err
	}
	return bindRole(ctx, cs, role, binding, subjects)
}

// bindRole puts role in its namespace (made if missing) and binds it to subjects with a
// RoleBinding named binding.
func bindRole(ctx context.Context, cs kubernetes.Interface, role *rbacv1.Role, binding string, subjects []rbacv1.Subject) error {
	ns := role.Namespace
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	api := cs.RbacV1().Roles(ns)
	got, err := api.Get(ctx, role.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = api.Create(ctx, role, metav1.CreateOptions{})
	} else if err == nil {
		got.Rules = role.Rules
		_, err = api.Update(ctx, got, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("applying Role %s/%s: %w", ns, role.Name, err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: binding, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   subjects,
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("binding Role %s/%s: %w", ns, role.Name, err)
	}
	return nil
}

// BindToHub binds the Role role in namespace to the user cfg (HubIdentity's) authenticates as,
// as an installer grants the hub a Role outside its generated ones, until the test ends.
func BindToHub(t testing.TB, c client.Client, cfg *rest.Config, namespace, role string) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	who, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	Create(t, c, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{GenerateName: role + "-", Namespace: namespace},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: who.Status.UserInfo.Username}}})
}
