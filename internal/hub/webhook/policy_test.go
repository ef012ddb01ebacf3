package webhook

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
)

func TestReviewPolicy(t *testing.T) {
	tmpl := func(def string) []*policyv1.PolicyTemplate {
		return []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: []byte(def)}}}
	}
	withAction := tmpl(`{"kind":"ConfigurationPolicy","spec":{"remediationAction":"inform"}}`)
	without := tmpl(`{"kind":"ConfigurationPolicy","spec":{}}`)
	long := strings.Repeat("n", 40)
	cases := map[string]struct {
		old, cur *policyv1.Policy
		want     string // a part of the denial, "" for none
	}{
		"a short name and the template's action": {cur: &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "gov", Name: "p"}, Spec: policyv1.PolicySpec{PolicyTemplates: withAction}}},
		"62 characters pass": {cur: &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: strings.Repeat("a", 22), Name: long},
			Spec: policyv1.PolicySpec{RemediationAction: "inform"}}},
		"63 characters are refused on create": {cur: &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: strings.Repeat("a", 23), Name: long},
			Spec: policyv1.PolicySpec{RemediationAction: "inform"}}, want: "metadata.name: namespace and name together are 63 characters"},
		"an old long name may be updated": {old: &policyv1.Policy{}, cur: &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: strings.Repeat("a", 23), Name: long},
			Spec: policyv1.PolicySpec{RemediationAction: "inform"}}},
		"no action anywhere": {cur: &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "gov", Name: "p"}, Spec: policyv1.PolicySpec{PolicyTemplates: without}},
			want: "spec.remediationAction and spec.policy-templates[0].objectDefinition.spec.remediationAction are both unset"},
		"the policy's action covers the templates": {cur: &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "gov", Name: "p"},
			Spec: policyv1.PolicySpec{RemediationAction: "enforce", PolicyTemplates: without}}},
		"a copy passes": {cur: &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: strings.Repeat("x", 70),
			Labels: map[string]string{policyv1.RootPolicyLabel: "x"}}, Spec: policyv1.PolicySpec{PolicyTemplates: without}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := strings.Join(ReviewPolicy(tc.old, tc.cur), "; ")
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("ReviewPolicy = %q, want a denial containing %q", got, tc.want)
			}
		})
	}
}
