package rbac

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Name names the hub's ClusterRole and its Role (leader election, and impersonating OCM's add-on
// manager ServiceAccount in that namespace).
const Name = "flotilla-hub"

// LeaderElectionNamespace is the namespace role.yaml puts the leader election Role in: the hub's
// default --leader-election-namespace.
const LeaderElectionNamespace = "open-cluster-management-hub"

//go:embed role.yaml
var roleYAML []byte

// FlowerNamespace is the namespace of the hub's Role for the built-in add-on flower-addon: the
// SuperLink, its certificates and the add-on's AddOnDeploymentConfig (internal/hub/flower).
const FlowerNamespace = "flower-system"

// ManagedServiceAccountAgentName names the ClusterRole that lets a cluster's agent keep the token
// Secrets of its ManagedServiceAccounts: the hub binds it, with a RoleBinding in the cluster's
// namespace to that cluster's agents, while the namespace holds ManagedServiceAccounts
// (internal/hub/managedserviceaccount). An installer makes it with the hub's roles; the hub holds
// bind on it and no right to Secrets itself.
const ManagedServiceAccountAgentName = "flotilla-managed-serviceaccount-agent"

// ManagedServiceAccountAgentRole is ClusterRole ManagedServiceAccountAgentName: get, create,
// update and patch Secrets, by name (no list, no watch, no delete). Bound in one namespace, it
// holds there only.
func ManagedServiceAccountAgentRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: ManagedServiceAccountAgentName},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "create", "update", "patch"}}},
	}
}

// YAML returns role.yaml as generated: the ClusterRole, then the Roles.
func YAML() []byte { return bytes.Clone(roleYAML) }

// ClusterRole returns the hub's ClusterRole.
func ClusterRole() (*rbacv1.ClusterRole, error) {
	cr, _, err := parse()
	return cr, err
}

// FlowerRole returns the hub's Role in FlowerNamespace: Secrets, ConfigMaps, Services and
// Deployments there, for the SuperLink of flower-addon. An installer makes the namespace and
// binds it, as it binds the ClusterRole.
func FlowerRole() (*rbacv1.Role, error) {
	_, roles, err := parse()
	if err != nil {
		return nil, err
	}
	return roles[FlowerNamespace], nil
}

// LeaderElectionRole returns the hub's Role (leader election, and impersonating OCM's add-on
// manager ServiceAccount of that namespace), placed in namespace (the hub's
// --leader-election-namespace).
func LeaderElectionRole(namespace string) (*rbacv1.Role, error) {
	_, roles, err := parse()
	if err != nil {
		return nil, err
	}
	r := roles[LeaderElectionNamespace]
	r.Namespace = namespace
	return r, nil
}

// parse reads role.yaml: the ClusterRole, and the Roles by namespace, which must be the leader
// election Role and the flower Role; it refuses anything else.
func parse() (*rbacv1.ClusterRole, map[string]*rbacv1.Role, error) {
	var cr *rbacv1.ClusterRole
	roles := map[string]*rbacv1.Role{}
	rd := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(roleYAML)))
	for {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("config/rbac/role.yaml: %w", err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var kind struct{ Kind string }
		if err := yaml.Unmarshal(doc, &kind); err != nil {
			return nil, nil, fmt.Errorf("config/rbac/role.yaml: %w", err)
		}
		switch kind.Kind {
		case "ClusterRole":
			cr = &rbacv1.ClusterRole{}
			err = yaml.UnmarshalStrict(doc, cr)
		case "Role":
			r := &rbacv1.Role{}
			if err = yaml.UnmarshalStrict(doc, r); err == nil {
				if r.Namespace != LeaderElectionNamespace && r.Namespace != FlowerNamespace {
					err = fmt.Errorf("a Role in namespace %q, which is neither %s nor %s", r.Namespace, LeaderElectionNamespace, FlowerNamespace)
				}
				roles[r.Namespace] = r
			}
		default:
			err = fmt.Errorf("unexpected kind %q", kind.Kind)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("config/rbac/role.yaml: %w", err)
		}
	}
	if cr == nil || roles[LeaderElectionNamespace] == nil || roles[FlowerNamespace] == nil {
		return nil, nil, fmt.Errorf("config/rbac/role.yaml: want a ClusterRole and Roles in %s and %s; run make generate", LeaderElectionNamespace, FlowerNamespace)
	}
	return cr, roles, nil
}
