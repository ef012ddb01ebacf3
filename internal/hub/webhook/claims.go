package webhook

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
)

// A ManagedCluster's status.clusterClaims are the cluster's own word about itself: its agent
// copies them from the ClusterClaims on the cluster. The hub acts on them as such: placements
// select clusters by claim, and the FederatedLearning controller gives a client only to a
// cluster that reports the data claim, sending it the data path the claim names. So only the
// cluster's own agent may change them (add, remove, change a value, reorder); an administrator,
// another cluster's agent, an add-on's agent and the hub are refused. RBAC cannot say this: the
// status subresource is one permission for every status field, and the hub writes conditions
// there.

// ClaimsWebhookName names the webhook that checks status writes (managedclusters/status) of
// ManagedClusters; it is served at ManagedClusterPath with the ManagedCluster webhook.
const ClaimsWebhookName = "managedclusterclaims.hub.flotilla.io"

// maxClaimChanges bounds how many changed claims a refusal lists; the rest are counted.
const maxClaimChanges = 5

// ownAgent reports whether user is the registration agent of cluster: its user name is one of
// that cluster's agents' (clusteridentity.User) and it is in that cluster's group, as the
// certificates the hub approves for the cluster's agents say (clusteridentity.Groups).
func ownAgent(user authenticationv1.UserInfo, cluster string) bool {
	c, _, ok := clusteridentity.ParseUser(user.Username)
	return ok && c == cluster && slices.Contains(user.Groups, clusteridentity.Group(cluster))
}

// claimEdits refuses a write of cur over old that changes status.clusterClaims, unless user is
// the cluster's own agent.
func claimEdits(subject string, user authenticationv1.UserInfo, old, cur *clusterv1.ManagedCluster) []string {
	if slices.Equal(old.Status.ClusterClaims, cur.Status.ClusterClaims) || ownAgent(user, cur.Name) {
		return nil
	}
	return []string{fmt.Sprintf("%s: status.clusterClaims is reported by the cluster's own agent only (from the ClusterClaims "+
		"on the cluster), and %s is not that agent%s; this write would %s; create, change or delete the ClusterClaim on "+
		"cluster %s instead, and its agent reports it", subject, user.Username, whose(user),
		describeClaimChanges(old.Status.ClusterClaims, cur.Status.ClusterClaims), cur.Name)}
}

// whose says, for a refusal, whose agent user is when it is an agent at all.
func whose(user authenticationv1.UserInfo) string {
	if c, _, ok := clusteridentity.ParseUser(user.Username); ok {
		return fmt.Sprintf(" (it is cluster %s's)", c)
	}
	if c, addon, _, ok := clusteridentity.ParseAddOnUser(user.Username); ok {
		return fmt.Sprintf(" (it is add-on %s's agent on cluster %s)", addon, c)
	}
	return ""
}

// describeClaimChanges says what cur does to the claims old has: the claims it adds, changes
// and removes, each once, in the order of the lists; or, when every name keeps its (first) value,
// that it reorders or repeats them.
func describeClaimChanges(old, cur []clusterv1.ManagedClusterClaim) string {
	from := map[string]string{}
	for _, c := range old {
		if _, seen := from[c.Name]; !seen {
			from[c.Name] = c.Value
		}
	}
	said := map[string]bool{}
	var changes []string
	for _, c := range cur {
		if said[c.Name] {
			continue
		}
		said[c.Name] = true
		switch v, had := from[c.Name]; {
		case !had:
			changes = append(changes, fmt.Sprintf("add claim %s=%q", c.Name, c.Value))
		case v != c.Value:
			changes = append(changes, fmt.Sprintf("change claim %s from %q to %q", c.Name, v, c.Value))
		}
	}
	for _, c := range old {
		if !said[c.Name] {
			said[c.Name] = true
			changes = append(changes, "remove claim "+c.Name)
		}
	}
	switch {
	case len(changes) == 0:
		return "reorder or repeat claims"
	case len(changes) > maxClaimChanges:
		return strings.Join(changes[:maxClaimChanges], ", ") + fmt.Sprintf(" and %d more changes", len(changes)-maxClaimChanges)
	}
	return strings.Join(changes, ", ")
}

// claimsHook turns a webhook built for ManagedClusters into the claims webhook: it covers updates
// of the status subresource, and the API server calls it only for one that changes
// status.clusterClaims. The hub's and the agents' other status writes (conditions, capacity,
// version) therefore go through without a call, also while no hub answers.
func claimsHook(w admissionregistrationv1.ValidatingWebhook) admissionregistrationv1.ValidatingWebhook {
	for i := range w.Rules {
		w.Rules[i].Operations = []admissionregistrationv1.OperationType{admissionregistrationv1.Update}
		w.Rules[i].Resources = []string{"managedclusters/status"}
	}
	claims := func(o string) string {
		return fmt.Sprintf("(has(%[1]s.status) && has(%[1]s.status.clusterClaims) ? %[1]s.status.clusterClaims : [])", o)
	}
	w.MatchConditions = []admissionregistrationv1.MatchCondition{{
		Name:       "claims-changed",
		Expression: claims("object") + " != " + claims("oldObject"),
	}}
	return w
}
