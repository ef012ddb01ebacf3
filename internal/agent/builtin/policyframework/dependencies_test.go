package policyframework

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
)

func TestCheckDependencies(t *testing.T) {
	dep := func(kind, ns, name string, want policyv1.ComplianceState) policyv1.PolicyDependency {
		return policyv1.PolicyDependency{TypeMeta: metav1.TypeMeta{APIVersion: "policy.open-cluster-management.io/v1", Kind: kind},
			Namespace: ns, Name: name, Compliance: want}
	}
	copyOf := func(name string, state policyv1.ComplianceState) *policyv1.Policy {
		return &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: policyv1.PolicyStatus{ComplianceState: state}}
	}
	copies := map[string]*policyv1.Policy{
		"team-a.namespaces": copyOf("team-a.namespaces", policyv1.Compliant),
		"team-a.quota":      copyOf("team-a.quota", policyv1.NonCompliant),
		"infra.base":        copyOf("infra.base", policyv1.Compliant),
	}
	cps := map[string]*policyv1.ConfigurationPolicy{
		"limits":  {ObjectMeta: metav1.ObjectMeta{Name: "limits", Generation: 2}, Status: policyv1.ConfigurationPolicyStatus{ComplianceState: "Compliant", LastEvaluatedGeneration: 2}},
		"changed": {ObjectMeta: metav1.ObjectMeta{Name: "changed", Generation: 3}, Status: policyv1.ConfigurationPolicyStatus{ComplianceState: "Compliant", LastEvaluatedGeneration: 2}},
	}
	for name, tc := range map[string]struct {
		deps, extra []policyv1.PolicyDependency
		want        dependencyCheck
	}{
		"none":                         {},
		"met, in the root's namespace": {deps: []policyv1.PolicyDependency{dep("Policy", "", "namespaces", policyv1.Compliant)}},
		"met, another namespace":       {deps: []policyv1.PolicyDependency{dep("Policy", "infra", "base", "compliant")}},
		"NonCompliant wanted and had":  {deps: []policyv1.PolicyDependency{dep("Policy", "", "quota", policyv1.NonCompliant)}},
		"not in the state": {deps: []policyv1.PolicyDependency{dep("Policy", "", "quota", policyv1.Compliant)},
			want: dependencyCheck{pending: []string{"Policy team-a.quota"}}},
		"no such copy on this cluster": {deps: []policyv1.PolicyDependency{dep("Policy", "", "absent", policyv1.Compliant)},
			want: dependencyCheck{pending: []string{"Policy team-a.absent"}}},
		"extra dependencies add to the policy's": {deps: []policyv1.PolicyDependency{dep("Policy", "", "quota", policyv1.Compliant)},
			extra: []policyv1.PolicyDependency{dep("ConfigurationPolicy", "", "limits", policyv1.Compliant), dep("ConfigurationPolicy", "", "changed", policyv1.Compliant)},
			want:  dependencyCheck{pending: []string{"Policy team-a.quota", "ConfigurationPolicy changed"}}},
		"another group": {deps: []policyv1.PolicyDependency{{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, Name: "x", Compliance: policyv1.Compliant}},
			want: dependencyCheck{invalid: "dependency 0 (ConfigMap x of v1) is not a policy: dependencies name a Policy or a ConfigurationPolicy of policy.open-cluster-management.io"}},
		"a PolicySet": {deps: []policyv1.PolicyDependency{dep("PolicySet", "", "set", policyv1.Compliant)},
			want: dependencyCheck{invalid: "dependency 0 is a PolicySet, which this cluster cannot check: name a Policy or a ConfigurationPolicy (a PolicySet's policies, one by one)"}},
	} {
		t.Run(name, func(t *testing.T) {
			p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Name: "team-a.web", Labels: map[string]string{policyv1.RootPolicyLabel: "team-a.web"}},
				Spec: policyv1.PolicySpec{Dependencies: tc.deps, PolicyTemplates: []*policyv1.PolicyTemplate{{ExtraDependencies: tc.extra}}}}
			got := checkDependencies(p, 0, copies, cps)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(dependencyCheck{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if got := pendingResult([]string{"Policy default.policy-pod"}); got.message != "Pending; template-error; Dependencies were not satisfied: 1 dependencies are still pending (Policy default.policy-pod)" {
		t.Errorf("pending message %q is not OCM's", got.message)
	}
}
