package policyframework

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
)

func policy(name string, remediation policyv1.RemediationAction, defs ...string) *policyv1.Policy {
	p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: name}, Spec: policyv1.PolicySpec{RemediationAction: remediation}}
	for _, d := range defs {
		p.Spec.PolicyTemplates = append(p.Spec.PolicyTemplates, &policyv1.PolicyTemplate{ObjectDefinition: runtime.RawExtension{Raw: []byte(d)}})
	}
	return p
}

func TestTemplates(t *testing.T) {
	cp := `{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"ns","labels":{"x":"y"}},"spec":{"remediationAction":"inform","severity":"low"}}`
	taken := map[string]string{}
	got := templates(policy("gov.a", "enforce", cp,
		`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"CertificatePolicy","metadata":{"name":"c"}}`,
		`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{}}`,
		`[1,2]`), "c1", taken)
	if len(got) != 4 {
		t.Fatalf("%d templates, want 4", len(got))
	}
	want := &policyv1.ConfigurationPolicy{
		TypeMeta: metav1.TypeMeta{APIVersion: "policy.open-cluster-management.io/v1", Kind: "ConfigurationPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: "ns", Namespace: "c1",
			Labels: map[string]string{"x": "y", PolicyLabel: "gov.a", builtinaddon.Label: Name}},
		// pruneObjectBehavior and terminatingInclusion: the CRD's defaults, as the API server
		// stores them (namespaceSelector is always sent, as {}).
		Spec: policyv1.ConfigurationPolicySpec{RemediationAction: "enforce", Severity: "low", PruneObjectBehavior: "None",
			NamespaceSelector: policyv1.Target{TerminatingInclusion: "Default"}},
	}
	if diff := cmp.Diff(want, got[0].object); diff != "" || got[0].problem != "" {
		t.Errorf("the ConfigurationPolicy (-want +got):\n%s%s", diff, got[0].problem)
	}
	for i, w := range map[int]string{1: "is a CertificatePolicy", 2: "metadata.name is empty", 3: "is not an object"} {
		if !strings.Contains(got[i].problem, w) || got[i].object != nil {
			t.Errorf("template %d: problem %q, want one containing %q and no object", i, got[i].problem, w)
		}
	}
	// Another policy's template of the same name is refused, naming the first.
	again := templates(policy("gov.b", "", cp), "c1", taken)
	if !strings.Contains(again[0].problem, "template of policy gov.a") {
		t.Errorf("a second template named ns: %q", again[0].problem)
	}
}

func TestPolicyStatus(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	p := policy("gov.a", "", "{}", "{}")
	st := policyStatus(p, []string{"one", "two"}, []observed{
		{state: policyv1.NonCompliant, message: "NonCompliant; violation - x"}, {}}, t0)
	if st.ComplianceState != policyv1.NonCompliant || len(st.Details) != 2 || len(st.Details[0].History) != 1 || len(st.Details[1].History) != 0 {
		t.Fatalf("first report: %+v", st)
	}
	p.Status = st
	// The same message adds nothing; a new one goes first; the history is bounded.
	same := policyStatus(p, []string{"one", "two"}, []observed{{state: policyv1.NonCompliant, message: "NonCompliant; violation - x"}, {}}, t0.Add(time.Minute))
	if diff := cmp.Diff(st, same); diff != "" {
		t.Errorf("an unchanged report changed the status (-before +after):\n%s", diff)
	}
	for i := range 12 {
		p.Status = policyStatus(p, []string{"one", "two"}, []observed{
			{state: policyv1.Compliant, message: "Compliant; notification - " + strings.Repeat("y", i+1)},
			{state: policyv1.Compliant, message: "Compliant; ok"}}, t0.Add(time.Duration(i)*time.Minute))
	}
	h := p.Status.Details[0].History
	if len(h) != HistoryLimit || h[0].Message != "Compliant; notification - "+strings.Repeat("y", 12) {
		t.Errorf("history: %d entries, first %q", len(h), h[0].Message)
	}
	if p.Status.ComplianceState != policyv1.Compliant {
		t.Errorf("all compliant: %q", p.Status.ComplianceState)
	}
	p.Spec.PolicyTemplates[1].IgnorePending = true
	if got := policyStatus(p, []string{"one", "two"}, []observed{{state: policyv1.Compliant, message: "m"}, {state: policyv1.Pending, message: "p"}}, t0); got.ComplianceState != policyv1.Compliant {
		t.Errorf("an ignored Pending template: %q, want Compliant", got.ComplianceState)
	}
}

func TestObserve(t *testing.T) {
	cp := &policyv1.ConfigurationPolicy{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Status: policyv1.ConfigurationPolicyStatus{
		ComplianceState: "NonCompliant", LastEvaluatedGeneration: 3,
		CompliancyDetails: []policyv1.TemplateStatus{{Conditions: []policyv1.Condition{{Type: "violation", Message: "namespaces [prod] not found"}}}},
		RelatedObjects: []policyv1.RelatedObject{
			{Object: policyv1.ObjectResource{Kind: "Namespace", Metadata: policyv1.ObjectMetadata{Name: "prod"}}, Compliant: "NonCompliant", Reason: "Resource not found but should exist"},
			{Object: policyv1.ObjectResource{Kind: "Namespace", Metadata: policyv1.ObjectMetadata{Name: "dev"}}, Compliant: "Compliant"}}}}
	if got := observe(cp); got.message != "NonCompliant; violation - namespaces [prod] not found" || len(got.related) != 1 || got.related[0].Object.Metadata.Name != "prod" {
		t.Errorf("observe = %+v, want the message and only the non-compliant related object", got)
	}
	cp.Generation = 4
	if got := observe(cp); got.state != "" || got.message != "" || got.related != nil {
		t.Errorf("a result of an older generation is reported: %+v", got)
	}
}
