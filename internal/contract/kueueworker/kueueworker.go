package kueueworker

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/kubeconfig"
)

const (
	// Namespace holds the ServiceAccount on the worker.
	Namespace = "flotilla-multikueue"
	// ServiceAccount is the identity MultiKueue acts as on the worker.
	ServiceAccount = "multikueue"
	// ClusterRoleName names the worker's ClusterRole and ClusterRoleBinding.
	ClusterRoleName = "flotilla:multikueue-worker"
	// WorkName is the hub's ManifestWork, in the cluster's namespace, that delivers them.
	WorkName = "multikueue-worker"
	// AddOnName is the built-in add-on that reports the token.
	AddOnName = "multikueue-worker"
	// TokenSecretAnnotation on the add-on's ManagedClusterAddOn says where the agent reports the
	// token: "<namespace>/<name>" of a Secret the hub made for it (TokenSecret) in the Kueue
	// namespace, which the agent may read and update and nothing else.
	TokenSecretAnnotation = "kueue.flotilla.io/token-secret"
	// Keys of the token Secret: the token, the worker's CA (PEM) and the server address the agent
	// reaches its cluster at.
	TokenKey  = "token"
	CAKey     = "ca.crt"
	ServerKey = "server"
	// ExpiresAnnotation on the token Secret is when the token expires (RFC 3339).
	ExpiresAnnotation = "kueue.flotilla.io/token-expires"
	// Lifetime is the lifetime the agent asks for; the worker's API server may shorten it.
	Lifetime = time.Hour
	// RefreshFraction of a token's lifetime passes before the agent asks for the next one.
	RefreshFraction = 0.8

	// ManagedServiceAccount is the ManagedServiceAccount the hub makes in a worker's namespace on
	// the ClusterProfile path: its ServiceAccount, open-cluster-management-agent-addon/multikueue
	// on the worker (ProfileNamespace), is what MultiKueue acts as there, and its token Secret on
	// the hub (<cluster>/multikueue) is what the credentials plugin hands Kueue.
	ManagedServiceAccount = "multikueue"
	// ProfileNamespace holds the ManagedServiceAccount's ServiceAccount on the worker (the
	// managed-serviceaccount add-on's namespace, OCM's).
	ProfileNamespace = addonv1alpha1.DefaultAgentInstallNamespace
)

// Names built from a cluster's name must never be equal for two clusters, or for two kinds of
// Secret: the token Secret is the one Secret in the Kueue namespace an agent may write, so were
// cluster x's token Secret named like cluster y's kubeconfig Secret, x's agent would read and
// rewrite y's credentials. The kubeconfig Secret keeps OCM's name, multikueue-<cluster> (OCM's
// kueue-addon and its users name it so); everything else joins its fixed part to the cluster's
// name with a character a cluster's name cannot hold (it is a DNS label: no '.', no ':'). So
// "multikueue-token.<cluster>" is no multikueue-<cluster> (what follows "multikueue-" would hold
// a dot) and no other cluster's token Secret (the name after the one dot is the cluster's).
// TestDerivedNamesAreDistinct (internal/hub) checks every such name against adversarial clusters.

// TokenSecret is the name of the Secret, in the hub's Kueue namespace, where cluster's agent
// reports its token. Until issue 19 it was multikueue-token-<cluster>, which is also the
// kubeconfig Secret multikueue-<cluster> of the cluster named token-<cluster>.
func TokenSecret(cluster string) string { return "multikueue-token." + cluster }

// TokenRole names the Role and RoleBinding in the Kueue namespace that let cluster's agent write
// its token Secret (a ':' ends the fixed part, which no cluster name holds).
func TokenRole(cluster string) string { return "flotilla:multikueue-token:" + cluster }

// Rules are what MultiKueue does on a worker for batch/v1 Jobs, Kueue's own minimal set: make,
// watch and delete the Jobs and their Workloads, write the Workloads' status, and read the Jobs'
// and Pods' status. Nothing else: no Secrets, no Nodes, no RBAC.
func Rules() []rbacv1.PolicyRule {
	all := []string{"create", "update", "patch", "delete", "get", "list", "watch"}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: all},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs/status"}, Verbs: []string{"get"}},
		{APIGroups: []string{"kueue.x-k8s.io"}, Resources: []string{"workloads"}, Verbs: all},
		{APIGroups: []string{"kueue.x-k8s.io"}, Resources: []string{"workloads/status"}, Verbs: []string{"get", "patch", "update"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: all},
		{APIGroups: []string{""}, Resources: []string{"pods/status"}, Verbs: []string{"get"}},
	}
}

// Manifests are the objects the hub's ManifestWork puts on the worker on the Secret path: the
// ServiceAccount the agent requests tokens of, and its rules.
func Manifests() []runtime.Object {
	return append([]runtime.Object{
		&corev1.Namespace{TypeMeta: typeMeta("v1", "Namespace"), ObjectMeta: metav1.ObjectMeta{Name: Namespace}},
		&corev1.ServiceAccount{TypeMeta: typeMeta("v1", "ServiceAccount"),
			ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: ServiceAccount}},
	}, rulesFor(Namespace, ServiceAccount)...)
}

// ProfileManifests are the objects the hub's ManifestWork puts on the worker on the ClusterProfile
// path: the rules only, bound to the ManagedServiceAccount's ServiceAccount, which the
// managed-serviceaccount add-on makes (and which has no rights of its own).
func ProfileManifests() []runtime.Object {
	return rulesFor(ProfileNamespace, ManagedServiceAccount)
}

// rulesFor are the ClusterRole of Rules and its binding to ServiceAccount namespace/name.
func rulesFor(namespace, name string) []runtime.Object {
	return []runtime.Object{
		&rbacv1.ClusterRole{TypeMeta: typeMeta(rbacv1.SchemeGroupVersion.String(), "ClusterRole"),
			ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleName}, Rules: Rules()},
		&rbacv1.ClusterRoleBinding{TypeMeta: typeMeta(rbacv1.SchemeGroupVersion.String(), "ClusterRoleBinding"),
			ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleName},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ClusterRoleName},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}}},
	}
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

// Token is what the agent reported in the token Secret.
type Token struct {
	Token, Server string
	CA            []byte
}

// FromSecret reads the token Secret, or says which key is missing or unusable. The agent writes
// it, so the token must be a bearer token (visible ASCII, as a JWT is) and the server printable
// UTF-8: a kubeconfig is text, and other bytes would reach MultiKueue altered (invalid UTF-8
// becomes U+FFFD) or break its Authorization header.
func FromSecret(s *corev1.Secret) (Token, error) {
	t := Token{Token: string(s.Data[TokenKey]), Server: string(s.Data[ServerKey]), CA: s.Data[CAKey]}
	for _, kv := range [][2]string{{TokenKey, t.Token}, {CAKey, string(t.CA)}, {ServerKey, t.Server}} {
		if kv[1] == "" {
			return Token{}, fmt.Errorf("the token Secret %s/%s has no key %s", s.Namespace, s.Name, kv[0])
		}
	}
	if i := strings.IndexFunc(t.Token, func(r rune) bool { return r < '!' || r > '~' }); i >= 0 {
		return Token{}, fmt.Errorf("the token Secret %s/%s key %s holds a byte that is no token's, at offset %d: "+
			"the cluster's agent must report its ServiceAccount token as issued", s.Namespace, s.Name, TokenKey, i)
	}
	if !utf8.ValidString(t.Server) || strings.ContainsFunc(t.Server, unicode.IsControl) {
		return Token{}, fmt.Errorf("the token Secret %s/%s key %s is not a printable URL (%q): "+
			"the cluster's agent must report the address it reaches its API server at", s.Namespace, s.Name, ServerKey, t.Server)
	}
	return t, nil
}

// Kubeconfig is the kubeconfig MultiKueue uses for cluster: the token, inline, at server,
// trusting ca (Kueue refuses token files and CA files).
func Kubeconfig(cluster, server string, ca []byte, token string) ([]byte, error) {
	return kubeconfig.Build(cluster, server, ca, &clientcmdapi.AuthInfo{Token: token})
}
