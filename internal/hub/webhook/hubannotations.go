package webhook

import (
	"fmt"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/contract/fencing"
)

// The hub keeps a cluster's fencing state in annotations of its ManagedCluster
// (fencing.ClusterAnnotationPrefix): the Timing its agent renews and fences by, and the epoch
// and time at which the hub last declared it lost. The agent acts on them: a raised epoch tells
// it that its fenced workloads run elsewhere now, so it deletes its copies; a longer Timing lets
// it fence later than the hub declares it lost. Whoever may update ManagedClusters could set
// them, so only the hub may: RBAC cannot say it, since they are metadata of an object others
// edit. A write that changes them (adds, removes or changes one) by any other user is refused,
// the administrators' included; their changes belong in FailoverPolicies, which the hub turns
// into the Timing. The hub is known by its user name, which it learns at start
// (SelfSubjectReview): every replica runs as the same identity.

// hubAnnotationEdits refuses a write of cur over old (empty when creating) by user that changes
// an annotation with fencing.ClusterAnnotationPrefix, unless user is hub.
func hubAnnotationEdits(subject, hub string, user authenticationv1.UserInfo, old, cur *clusterv1.ManagedCluster) []string {
	if hub != "" && user.Username == hub {
		return nil
	}
	var changes []string
	for _, key := range labelKeys(old.Annotations, cur.Annotations) {
		if !strings.HasPrefix(key, fencing.ClusterAnnotationPrefix) {
			continue
		}
		from, was := old.Annotations[key]
		to, is := cur.Annotations[key]
		switch {
		case was && is && from == to:
		case !was:
			changes = append(changes, fmt.Sprintf("add %s=%q", key, to))
		case !is:
			changes = append(changes, fmt.Sprintf("remove %s=%q", key, from))
		default:
			changes = append(changes, fmt.Sprintf("change %s from %q to %q", key, from, to))
		}
	}
	if len(changes) == 0 {
		return nil
	}
	slices.Sort(changes)
	return []string{fmt.Sprintf("%s: the annotations %s* are the hub's (%s): it writes %s from the FailoverPolicies "+
		"of the cluster's sets, and raises %s and %s when it declares the cluster lost, which the cluster's agent acts on; "+
		"%s is not the hub, and this write would %s; keep those annotations as they are, and change a FailoverPolicy "+
		"to change the cluster's timing", subject, fencing.ClusterAnnotationPrefix, hubName(hub),
		fencing.AnnotationTiming, fencing.AnnotationEpoch, fencing.AnnotationLostAt, user.Username, strings.Join(changes, ", "))}
}

// hubName names the hub's identity in a refusal.
func hubName(hub string) string {
	if hub == "" {
		return "no identity is known as the hub's"
	}
	return "user " + hub
}
