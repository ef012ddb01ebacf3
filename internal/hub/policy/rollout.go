package policy

import (
	"strings"
	"time"

	"k8s.io/utils/clock"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/internal/core/rollout"
)

// EnforcedSinceAnnotation is on a copy that a rollout turned to enforce: when it did (RFC 3339).
// A result the cluster reports after it is the enforce policy's.
const EnforcedSinceAnnotation = "policy.flotilla.io/enforced-since"

// rolls reports whether root's enforcement goes out by a rollout strategy other than All.
func rolls(root *policyv1.Policy) bool {
	s := root.Spec.RolloutStrategy
	return s != nil && s.Type != "" && s.Type != clusterv1alpha1.All
}

// stageRollout turns wants (the copies of names, nil where none goes) to inform where the
// strategy does not yet let enforce through, as the rollout library decides for
// ManifestWorkReplicaSets: a cluster whose copy is already the enforce policy of the current
// spec holds its place, Succeeded once it reports Compliant and Failed once it reports
// NonCompliant after it was turned to enforce; the others are ToApply until Decide lets them
// through, and are then turned to enforce now. It returns how soon a soak time or deadline ends.
func stageRollout(clk clock.PassiveClock, strategy clusterv1alpha1.RolloutStrategy, names []string, wants []*policyv1.Policy,
	existing map[string]*policyv1.Policy, groups map[string]rollout.GroupKey) (time.Duration, error) {
	now := clk.Now()
	var clusters []rollout.Cluster
	var states []rollout.ClusterStatus
	enforced := map[string]string{} // cluster -> the since of its current enforce copy
	index := map[string]int{}
	for i, c := range names {
		want := wants[i]
		if want == nil || !strings.EqualFold(string(want.Spec.RemediationAction), string(policyv1.Enforce)) {
			continue
		}
		index[c] = i
		clusters = append(clusters, rollout.Cluster{Name: c, Group: groups[c]})
		cur := existing[c]
		if cur == nil || cur.Annotations[EnforcedSinceAnnotation] == "" {
			continue
		}
		since := cur.Annotations[EnforcedSinceAnnotation]
		at, err := time.Parse(time.RFC3339, since)
		if err != nil {
			continue
		}
		if !sameCopy(cur, withSince(want.DeepCopy(), since)) {
			continue // the spec changed since: a new round
		}
		enforced[c] = since
		states = append(states, rollout.ClusterStatus{Name: c, Status: enforceStatus(cur, at), Since: at})
	}
	if len(clusters) == 0 {
		return 0, nil
	}
	res, err := rollout.Decide(clk, strategy, clusters, states)
	through := map[string]bool{}
	if err == nil {
		for _, c := range res.ToRollout {
			through[c.Name] = true
		}
	}
	for _, c := range clusters {
		want := wants[index[c.Name]]
		switch since, ok := enforced[c.Name]; {
		case ok:
			withSince(want, since)
		case through[c.Name]:
			withSince(want, now.UTC().Format(time.RFC3339))
		default:
			want.Spec.RemediationAction = policyv1.Inform
		}
	}
	return res.RecheckAfter, err
}

// enforceStatus is where a copy turned to enforce at since stands: its compliance, once the
// cluster has reported after since (the framework adds a history entry for every new spec it
// evaluates, even with the same message; an earlier one is of the inform policy or an older spec).
func enforceStatus(cur *policyv1.Policy, since time.Time) rollout.Status {
	if reportedAt(cur).Before(since) {
		return rollout.Progressing
	}
	switch cur.Status.ComplianceState {
	case policyv1.Compliant:
		return rollout.Succeeded
	case policyv1.NonCompliant:
		return rollout.Failed
	}
	return rollout.Progressing
}

func withSince(p *policyv1.Policy, since string) *policyv1.Policy {
	p.Annotations[EnforcedSinceAnnotation] = since
	return p
}
