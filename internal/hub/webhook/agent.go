package webhook

import (
	"fmt"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
)

// A cluster's agent reports on its ManagedCluster through status alone, and the hub grants it no
// more (internal/hub/registration gives it the status subresource only). Its spec and labels are
// the administrator's and the hub's, and the hub trusts them: placements and label-selected sets
// select clusters by their labels, taints quarantine a cluster, the Kueue controller connects to
// spec.managedClusterClientConfigs, and the lease controller judges the cluster by
// spec.leaseDurationSeconds. An agent that an administrator gave more (OCM's own agent role grants
// update on the cluster) still may not change them: agentEdits refuses it, so a compromised
// spoke cannot lift a quarantine, label itself into other tenants' placements, point the hub at
// another API server or stretch its lease.
//
// OCM's klusterlet writes spec once after it registered: it adds its API server's URLs to
// spec.managedClusterClientConfigs when they are missing, and takes a refusal (Forbidden) as the
// end of it. The agent's own creation (by the bootstrap identity) is not the agent's write.

// askAdmin ends every refusal of an agent's edit.
const askAdmin = "ask a hub administrator to make the change"

// isAgent reports whether user is a managed cluster's agent or an add-on's agent on one: its user
// name is one of theirs, or it carries the group every cluster agent's certificate has.
func isAgent(user authenticationv1.UserInfo) bool {
	if _, _, ok := clusteridentity.ParseUser(user.Username); ok {
		return true
	}
	if _, _, _, ok := clusteridentity.ParseAddOnUser(user.Username); ok {
		return true
	}
	return slices.Contains(user.Groups, clusteridentity.ManagedClustersGroup)
}

// agentEdits lists, as refusals, what an agent's write of cur over old changes in the spec and
// labels of a ManagedCluster.
func agentEdits(subject string, user authenticationv1.UserInfo, old, cur *clusterv1.ManagedCluster) []string {
	var out []string
	refuse := func(format string, args ...any) {
		out = append(out, fmt.Sprintf("%s: the cluster's agent %s may not ", subject, user.Username)+fmt.Sprintf(format, args...))
	}
	o, c := &old.Spec, &cur.Spec
	if o.HubAcceptsClient != c.HubAcceptsClient {
		refuse("change spec.hubAcceptsClient to %t: accepting and denying a cluster is a hub administrator's decision; %s",
			c.HubAcceptsClient, askAdmin)
	}
	if !equality.Semantic.DeepEqual(o.ManagedClusterClientConfigs, c.ManagedClusterClientConfigs) {
		refuse("change spec.managedClusterClientConfigs: the hub trusts these addresses of the cluster's API server "+
			"(the Kueue controller connects to them), so they are set when the cluster registers; %s", askAdmin)
	}
	if o.LeaseDurationSeconds != c.LeaseDurationSeconds {
		refuse("change spec.leaseDurationSeconds from %d to %d: the hub judges the cluster unreachable after 5 lease "+
			"durations without a renewal; %s", o.LeaseDurationSeconds, c.LeaseDurationSeconds, askAdmin)
	}
	out = append(out, hubTaintEdits(subject, user, old, cur)...)
	for _, key := range taintKeys(o.Taints, c.Taints) {
		if change := taintChange(o.Taints, c.Taints, key); change != "" && !slices.Contains(hubTaintKeys, key) {
			refuse("%s taint %s in spec.taints: taints other than the hub's are a hub administrator's (a quarantine, "+
				"a maintenance window), so keep the entries with that key as they are; %s", change, key, askAdmin)
		}
	}
	for _, key := range labelKeys(old.Labels, cur.Labels) {
		from, wasSet := old.Labels[key]
		to, isSet := cur.Labels[key]
		switch {
		case wasSet && isSet && from == to:
		case !wasSet:
			refuse("add label %s=%q (metadata.labels): placements and cluster sets select clusters by their labels, "+
				"so a hub administrator sets them; %s", key, to, askAdmin)
		case !isSet:
			refuse("remove label %s=%q (metadata.labels): placements and cluster sets select clusters by their labels, "+
				"so a hub administrator sets them; %s", key, from, askAdmin)
		default:
			refuse("change label %s from %q to %q (metadata.labels): placements and cluster sets select clusters by "+
				"their labels, so a hub administrator sets them; %s", key, from, to, askAdmin)
		}
	}
	return out
}

// hubTaintEdits lists, as refusals, the changes an agent's write of cur over old makes to the
// taints the hub owns.
func hubTaintEdits(subject string, user authenticationv1.UserInfo, old, cur *clusterv1.ManagedCluster) []string {
	var out []string
	for _, key := range hubTaintKeys {
		if change := taintChange(old.Spec.Taints, cur.Spec.Taints, key); change != "" {
			out = append(out, fmt.Sprintf(
				"%s: the cluster's agent %s may not %s taint %s in spec.taints; the hub adds and removes it "+
					"from the cluster's %s condition, so keep the entries with that key as they are",
				subject, user.Username, change, key, clusterv1.ManagedClusterConditionAvailable))
		}
	}
	return out
}

// taintKeys are the keys of the taints in old or cur, sorted, each once.
func taintKeys(old, cur []clusterv1.Taint) []string {
	var keys []string
	for _, t := range slices.Concat(old, cur) {
		keys = append(keys, t.Key)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// labelKeys are the keys of old and cur, sorted, each once.
func labelKeys(old, cur map[string]string) []string {
	var keys []string
	for k := range old {
		keys = append(keys, k)
	}
	for k := range cur {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// taintChange says what cur does to the taints with key that old has: "add", "remove",
// "change", or "" for nothing.
func taintChange(old, cur []clusterv1.Taint, key string) string {
	o, c := withKey(old, key), withKey(cur, key)
	switch {
	case len(o) == 0 && len(c) > 0:
		return "add"
	case len(o) > 0 && len(c) == 0:
		return "remove"
	case !equality.Semantic.DeepEqual(o, c):
		return "change"
	}
	return ""
}

func withKey(taints []clusterv1.Taint, key string) []clusterv1.Taint {
	var out []clusterv1.Taint
	for _, t := range taints {
		if t.Key == key {
			out = append(out, t)
		}
	}
	return out
}
