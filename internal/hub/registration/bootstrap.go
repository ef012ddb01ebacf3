package registration

import (
	"github.com/flotilla/flotilla/internal/contract/wellknown"

	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/flotilla/flotilla/internal/kubeconfig"
)

// The bootstrap identity: a service account whose tokens go into the kubeconfigs new agents join
// with. It may do nothing but register.
const (
	BootstrapNamespace      = "open-cluster-management"
	BootstrapServiceAccount = "cluster-bootstrap"
	BootstrapClusterRole    = "open-cluster-management:bootstrap"
)

// bootstrapRules let an agent create its ManagedCluster, read it back, and request and read
// certificates; nothing else.
func bootstrapRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{clusterGroup}, Resources: []string{"managedclusters"}, Verbs: []string{"create", "get"}},
		{APIGroups: []string{certsGroup}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create", "get", "list", "watch"}},
	}
}

// EnsureBootstrapIdentity creates the bootstrap service account and its role on the hub.
func EnsureBootstrapIdentity(ctx context.Context, cs kubernetes.Interface) error {
	create := func(what string, err error) error {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the bootstrap %s: %w", what, err)
		}
		return nil
	}
	if err := create("namespace", ignoreResult(cs.CoreV1().Namespaces().Create(ctx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: BootstrapNamespace}}, metav1.CreateOptions{}))); err != nil {
		return err
	}
	if err := create("service account", ignoreResult(cs.CoreV1().ServiceAccounts(BootstrapNamespace).Create(ctx,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: BootstrapServiceAccount, Labels: bootstrapLabels()}}, metav1.CreateOptions{}))); err != nil {
		return err
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: BootstrapClusterRole, Labels: bootstrapLabels()}, Rules: bootstrapRules()}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		if _, err := cs.RbacV1().ClusterRoles().Update(ctx, role, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating the bootstrap cluster role: %w", err)
		}
	} else if err != nil {
		return fmt.Errorf("creating the bootstrap cluster role: %w", err)
	}
	return create("cluster role binding", ignoreResult(cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: BootstrapClusterRole, Labels: bootstrapLabels()},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: BootstrapClusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: BootstrapNamespace, Name: BootstrapServiceAccount}},
	}, metav1.CreateOptions{})))
}

// bootstrapLabels mark the bootstrap identity as Flotilla's, so that `flotilla uninstall hub`
// removes it (and no identity of the same name that someone else made).
func bootstrapLabels() map[string]string {
	return map[string]string{wellknown.PartOfLabel: wellknown.PartOf}
}

func ignoreResult[T any](_ T, err error) error { return err }

// BootstrapKubeconfig issues a bootstrap token valid for ttl and returns a kubeconfig for the hub
// that uses it. hub gives the address and CA agents should use.
func BootstrapKubeconfig(ctx context.Context, cs kubernetes.Interface, hub *rest.Config, ttl time.Duration) ([]byte, error) {
	tr, err := cs.CoreV1().ServiceAccounts(BootstrapNamespace).CreateToken(ctx, BootstrapServiceAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(ttl.Seconds()))},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("issuing a bootstrap token (run `flotilla init` on the hub first): %w", err)
	}
	// The CA may come from a file in the administrator's kubeconfig; the agent's copy carries it inline.
	ca, err := kubeconfig.CA(hub)
	if err != nil {
		return nil, err
	}
	return kubeconfig.Build("bootstrap", hub.Host, ca, &clientcmdapi.AuthInfo{Token: tr.Status.Token})
}
