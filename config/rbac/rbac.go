package rbac

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"

	rbacv1 "k8s.io/api/rbac/v1"
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

// YAML returns role.yaml as generated: the ClusterRole, then the leader election Role.
func YAML() []byte { return bytes.Clone(roleYAML) }

// ClusterRole returns the hub's ClusterRole.
func ClusterRole() (*rbacv1.ClusterRole, error) {
	cr, _, err := parse()
	return cr, err
}

// LeaderElectionRole returns the hub's Role (leader election, and impersonating OCM's add-on
// manager ServiceAccount of that namespace), placed in namespace (the hub's
// --leader-election-namespace).
func LeaderElectionRole(namespace string) (*rbacv1.Role, error) {
	_, r, err := parse()
	if err != nil {
		return nil, err
	}
	r.Namespace = namespace
	return r, nil
}

// parse reads the two objects of role.yaml, refusing anything else in it.
func parse() (*rbacv1.ClusterRole, *rbacv1.Role, error) {
	var cr *rbacv1.ClusterRole
	var r *rbacv1.Role
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
			r = &rbacv1.Role{}
			err = yaml.UnmarshalStrict(doc, r)
		default:
			err = fmt.Errorf("unexpected kind %q", kind.Kind)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("config/rbac/role.yaml: %w", err)
		}
	}
	if cr == nil || r == nil {
		return nil, nil, fmt.Errorf("config/rbac/role.yaml: want a ClusterRole and a Role; run make generate")
	}
	return cr, r, nil
}
