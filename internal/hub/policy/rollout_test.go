package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/internal/core/rollout"
)

func TestStageRollout(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	now := t0.Add(time.Minute)
	since := t0.Format(time.RFC3339)
	root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "gov", Name: "limits", UID: "u1"}, Spec: policyv1.PolicySpec{
		RemediationAction: policyv1.Enforce,
		PolicyTemplates:   []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: []byte(`{"kind":"ConfigurationPolicy"}`)}}},
	}}
	progressive := clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive,
		Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)}}
	names := []string{"c1", "c2", "c3"}
	// enforcedCopy is cluster c's copy as the hub's cache holds it after the rollout turned it to
	// enforce at t0, reporting state at reported.
	enforcedCopy := func(c string, state policyv1.ComplianceState, reported time.Time, spec *policyv1.Policy) *policyv1.Policy {
		p := withSince(replica(spec, c, false), since)
		p.Status = policyv1.PolicyStatus{ComplianceState: state, Details: []*policyv1.DetailsPerTemplate{{
			History: []policyv1.ComplianceHistory{{LastTimestamp: metav1.NewTime(reported)}}}}}
		trimmed, err := TrimCopy(p)
		if err != nil {
			t.Fatal(err)
		}
		return trimmed.(*policyv1.Policy)
	}
	edited := root.DeepCopy()
	edited.Spec.PolicyTemplates[0].ObjectDefinition.Raw = []byte(`{"kind":"ConfigurationPolicy","spec":{}}`)
	for name, tc := range map[string]struct {
		root     *policyv1.Policy
		strategy clusterv1alpha1.RolloutStrategy
		existing map[string]*policyv1.Policy
		want     []string // each cluster's remediationAction and enforced-since
	}{
		"first pass: one enforces, the others inform": {root: root, strategy: progressive,
			want: []string{"enforce " + now.Format(time.RFC3339), "inform ", "inform "}},
		"c1 complies: c2 goes": {root: root, strategy: progressive,
			existing: map[string]*policyv1.Policy{"c1": enforcedCopy("c1", policyv1.Compliant, now, root)},
			want:     []string{"enforce " + since, "enforce " + now.Format(time.RFC3339), "inform "}},
		"c1's Compliant is from before it was enforced: it holds its place": {root: root, strategy: progressive,
			existing: map[string]*policyv1.Policy{"c1": enforcedCopy("c1", policyv1.Compliant, t0.Add(-time.Second), root)},
			want:     []string{"enforce " + since, "inform ", "inform "}},
		"c1 has not reported since: it holds its place": {root: root, strategy: progressive,
			existing: map[string]*policyv1.Policy{"c1": enforcedCopy("c1", policyv1.NonCompliant, t0.Add(-time.Minute), root)},
			want:     []string{"enforce " + since, "inform ", "inform "}},
		"c1 failed after enforce: the rollout stops": {root: root, strategy: progressive,
			existing: map[string]*policyv1.Policy{"c1": enforcedCopy("c1", policyv1.NonCompliant, now, root)},
			want:     []string{"enforce " + since, "inform ", "inform "}},
		"an edit starts a new round": {root: edited, strategy: progressive,
			existing: map[string]*policyv1.Policy{"c1": enforcedCopy("c1", policyv1.Compliant, now, root), "c2": enforcedCopy("c2", policyv1.Compliant, now, root)},
			want:     []string{"enforce " + now.Format(time.RFC3339), "inform ", "inform "}},
		"per group: the first group together": {root: root, strategy: clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.ProgressivePerGroup},
			want: []string{"enforce " + now.Format(time.RFC3339), "enforce " + now.Format(time.RFC3339), "inform "}},
	} {
		t.Run(name, func(t *testing.T) {
			wants := make([]*policyv1.Policy, len(names))
			for i, c := range names {
				wants[i] = replica(tc.root, c, false)
			}
			groups := map[string]rollout.GroupKey{"c1": {Index: 0}, "c2": {Index: 0}, "c3": {Index: 1}}
			if _, err := stageRollout(clocktesting.NewFakePassiveClock(now), tc.strategy, names, wants, tc.existing, groups); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range wants {
				got = append(got, strings.ToLower(string(w.Spec.RemediationAction))+" "+w.Annotations[EnforcedSinceAnnotation])
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("copies' remediationAction and enforced-since (-want +got):\n%s", diff)
			}
		})
	}
}
