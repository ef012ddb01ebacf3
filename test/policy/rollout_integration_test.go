//go:build integration

package policy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/internal/hub/policy"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestRolloutStrategy: an enforce policy with a Progressive rollout of one cluster at a time
// reaches every cluster at once as inform and is turned to enforce on one cluster, then on the
// next once the first reports Compliant; a cluster that reports NonCompliant after it was turned
// to enforce stops the rollout (maxFailures 0), and an edit starts a new round.
func TestRolloutStrategy(t *testing.T) {
	s := testenv.StartHubWithSet(t, "plc-roll")
	c := s.Client
	clusters := []string{"plc-roll-1", "plc-roll-2", "plc-roll-3"}
	for _, name := range clusters {
		s.AgentlessCluster(t, name, map[string]string{"roll": "yes"})
	}
	s.AgentlessPlacement(t, "roll", map[string]string{"roll": "yes"})
	root := loadPolicy(t, "policy-namespace.yaml", s.Namespace)
	root.Spec.RemediationAction = policyv1.Enforce
	root.Spec.RolloutStrategy = &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive,
		Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)}}
	testenv.Create(t, c, root)
	bind(t, s, "roll", "roll", subject(policyv1.Kind, root.Name))

	// enforcing waits until exactly n copies are turned to enforce (the others inform) and
	// returns the enforced clusters.
	enforcing := func(n int) []string {
		t.Helper()
		var enforced []string
		waitCopies(t, c, root, func(m map[string]*policyv1.Policy) string {
			enforced = nil
			for _, name := range clusters {
				p := m[name]
				switch action := strings.ToLower(string(p.Spec.RemediationAction)); {
				case action == "enforce" && p.Annotations[policy.EnforcedSinceAnnotation] != "":
					enforced = append(enforced, name)
				case action != "inform":
					return fmt.Sprintf("%s: remediationAction %q without %s", name, action, policy.EnforcedSinceAnnotation)
				}
			}
			if len(enforced) != n {
				var seen []string
				for _, name := range clusters {
					seen = append(seen, fmt.Sprintf("%s: %s since %q labels %v status %q", name, m[name].Spec.RemediationAction,
						m[name].Annotations[policy.EnforcedSinceAnnotation], m[name].Labels["round"], m[name].Status.ComplianceState))
				}
				return fmt.Sprintf("enforced on %v, want %d clusters: %v", enforced, n, seen)
			}
			return ""
		}, clusters...)
		return enforced
	}
	first := enforcing(1)
	report(t, c, root, first[0], policyv1.Compliant)
	second := enforcing(2)
	var next string
	for _, name := range second {
		if name != first[0] {
			next = name
		}
	}
	// The second fails: the third stays inform.
	report(t, c, root, next, policyv1.NonCompliant)
	enforcing(2)

	// An edit is a new round: one cluster enforced again. Reports carry whole seconds, and one of
	// the second the hub turns a copy to enforce counts as made after it: the edit waits for the
	// next second, as any real report of the old spec would be older.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	testenv.Update(t, c, root, func() { root.Spec.Disabled = false; root.Labels = map[string]string{"round": "2"} })
	enforcing(1)
}
