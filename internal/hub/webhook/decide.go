package webhook

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
)

// API groups of the permissions the webhook checks.
const (
	RegisterGroup = "register.open-cluster-management.io"
	ClusterGroup  = "cluster.open-cluster-management.io"
)

// Permission is what a SubjectAccessReview asks about: may the user do Verb on
// Resource/Subresource named Name in Group (in Namespace, for a namespaced permission).
type Permission struct {
	Verb, Group, Resource, Subresource, Name, Namespace string
}

// AcceptPermission is the permission to set spec.hubAcceptsClient of cluster to true.
func AcceptPermission(cluster string) Permission {
	return Permission{Verb: "update", Group: RegisterGroup, Resource: "managedclusters", Subresource: "accept", Name: cluster}
}

// JoinPermission is the permission to put a cluster in set, or take it out.
func JoinPermission(set string) Permission {
	return Permission{Verb: "create", Group: ClusterGroup, Resource: "managedclustersets", Subresource: "join", Name: set}
}

// BindPermission is the permission to bind set to a namespace.
func BindPermission(set string) Permission {
	return Permission{Verb: "create", Group: ClusterGroup, Resource: "managedclustersets", Subresource: "bind", Name: set}
}

// String says the permission as a refusal names it, such as `update managedclusters/accept on
// "gpu-east" in group register.open-cluster-management.io`.
func (p Permission) String() string {
	r := p.Resource
	if p.Subresource != "" {
		r += "/" + p.Subresource
	}
	on := ""
	if p.Name != "" {
		on = fmt.Sprintf(" on %q", p.Name)
	}
	if p.Namespace != "" {
		on += fmt.Sprintf(" in namespace %q", p.Namespace)
	}
	if p.Group == "" {
		return fmt.Sprintf("%s %s%s (core group)", p.Verb, r, on)
	}
	return fmt.Sprintf("%s %s%s in group %s", p.Verb, r, on, p.Group)
}

// Authorizer answers whether user holds p. The hub's asks the API server with a
// SubjectAccessReview; tests use a table.
type Authorizer func(ctx context.Context, user authenticationv1.UserInfo, p Permission) (bool, error)

// grantHint ends every refusal for a missing permission: RBAC is how it is granted.
const grantHint = "ask a hub administrator to bind a role with it"

// ReviewManagedCluster decides whether user may write cur over old (nil when creating). It
// returns the reasons to refuse, none when the write is allowed; an error means it could not
// decide (an Authorizer failed).
func ReviewManagedCluster(ctx context.Context, can Authorizer, user authenticationv1.UserInfo, old, cur *clusterv1.ManagedCluster) ([]string, error) {
	creating := old == nil
	if creating {
		old = &clusterv1.ManagedCluster{}
	}
	subject := fmt.Sprintf("managedclusters %q", cur.Name)
	var denials []string
	need := func(p Permission, what, hint string) error {
		ok, err := can(ctx, user, p)
		if err != nil {
			return fmt.Errorf("%s: checking whether %s may %s: %w", subject, user.Username, p, err)
		}
		if !ok {
			denials = append(denials, fmt.Sprintf("%s: %s needs permission to %s; %s", subject, what, p, hint))
		}
		return nil
	}

	if cur.Spec.HubAcceptsClient && !old.Spec.HubAcceptsClient {
		if err := need(AcceptPermission(cur.Name), "setting spec.hubAcceptsClient to true",
			grantHint+", or run flotilla accept as one"); err != nil {
			return nil, err
		}
	}

	for _, j := range setChanges(old.Labels, cur.Labels) {
		if err := need(JoinPermission(j.set), j.what, grantHint); err != nil {
			return nil, err
		}
	}

	switch {
	case !isAgent(user):
	case creating:
		// The bootstrap identity, not the agent, creates the cluster; an agent that may create
		// one still may not put the hub's taints on it.
		denials = append(denials, hubTaintEdits(subject, user, old, cur)...)
	default:
		denials = append(denials, agentEdits(subject, user, old, cur)...)
	}
	// On create the API server has dropped status already; a status write changes nothing else.
	denials = append(denials, claimEdits(subject, user, old, cur)...)
	return denials, nil
}

// ReviewBinding decides whether user may write cur over old (nil when creating); see
// ReviewManagedCluster. The name of a binding must equal spec.clusterSet (the API server checks
// it), so in practice only creating one needs the permission; a change of spec.clusterSet would.
func ReviewBinding(ctx context.Context, can Authorizer, user authenticationv1.UserInfo, old, cur *clusterv1beta2.ManagedClusterSetBinding) ([]string, error) {
	if old != nil && old.Spec.ClusterSet == cur.Spec.ClusterSet {
		return nil, nil
	}
	subject := fmt.Sprintf("managedclustersetbindings %q in namespace %q", cur.Name, cur.Namespace)
	p := BindPermission(cur.Spec.ClusterSet)
	ok, err := can(ctx, user, p)
	if err != nil {
		return nil, fmt.Errorf("%s: checking whether %s may %s: %w", subject, user.Username, p, err)
	}
	if ok {
		return nil, nil
	}
	return []string{fmt.Sprintf("%s: binding set %q (spec.clusterSet) needs permission to %s; %s",
		subject, cur.Spec.ClusterSet, p, grantHint)}, nil
}

// setChange is a set a cluster enters or leaves, with the change said for a refusal.
type setChange struct{ set, what string }

// setChanges lists the sets a change of the clusterset label makes a cluster enter or leave. An
// empty value names no set.
func setChanges(oldLabels, curLabels map[string]string) []setChange {
	from, to := oldLabels[clusterv1beta2.ClusterSetLabel], curLabels[clusterv1beta2.ClusterSetLabel]
	if from == to {
		return nil
	}
	label := clusterv1beta2.ClusterSetLabel
	var out []setChange
	switch {
	case from == "":
		out = append(out, setChange{to, fmt.Sprintf("setting label %s to %q (joining set %q)", label, to, to)})
	case to == "":
		out = append(out, setChange{from, fmt.Sprintf("removing label %s (leaving set %q)", label, from)})
	default:
		what := fmt.Sprintf("changing label %s from %q to %q", label, from, to)
		out = append(out,
			setChange{from, what + fmt.Sprintf(" (leaving set %q)", from)},
			setChange{to, what + fmt.Sprintf(" (joining set %q)", to)})
	}
	return out
}

// hubTaintKeys are the taints only the hub may set or clear.
var hubTaintKeys = []string{clusterv1.ManagedClusterTaintUnreachable, clusterv1.ManagedClusterTaintUnavailable}
