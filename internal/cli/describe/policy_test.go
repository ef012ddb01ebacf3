package describe

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/internal/contract/compliancehistory"
)

func TestDescribePolicy(t *testing.T) {
	root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "gov", Name: "netpol", CreationTimestamp: metav1.NewTime(now.Add(-2 * time.Hour))},
		Spec: policyv1.PolicySpec{RemediationAction: "Inform", PolicyTemplates: []*policyv1.PolicyTemplate{
			{ObjectDefinition: runtime.RawExtension{Raw: []byte(`{"kind":"ConfigurationPolicy","metadata":{"name":"netpol-ns"}}`)}}}},
		Status: policyv1.PolicyStatus{ComplianceState: policyv1.NonCompliant,
			Placement: []*policyv1.Placement{{PlacementBinding: "training", Placement: "training"}},
			Status: []*policyv1.CompliancePerClusterStatus{
				{ClusterName: "gpu-east", ClusterNamespace: "gpu-east", ComplianceState: policyv1.Compliant},
				{ClusterName: "gpu-west", ClusterNamespace: "gpu-west", ComplianceState: policyv1.NonCompliant},
				{ClusterName: "edge-1", ClusterNamespace: "edge-1"}}}}
	copyOf := func(cluster, msg string, ago time.Duration) *policyv1.Policy {
		return &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "gov.netpol"}, Status: policyv1.PolicyStatus{
			Details: []*policyv1.DetailsPerTemplate{{TemplateMeta: metav1.ObjectMeta{Name: "netpol-ns"},
				History: []policyv1.ComplianceHistory{{LastTimestamp: metav1.NewTime(now.Add(-ago)), Message: msg}}}}}}
	}
	t0 := now.Add(-3 * time.Hour).UTC().Truncate(time.Second)
	stamp := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339) }
	history := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "gov", Name: "netpol.compliance-history",
		Labels: map[string]string{compliancehistory.Label: "netpol"}}, Data: map[string]string{compliancehistory.Key: strings.Join([]string{
		stamp(0) + " gpu-west Compliant", stamp(0) + " gpu-east Compliant",
		stamp(time.Hour) + " gpu-west NonCompliant", stamp(90*time.Minute) + " gpu-west Compliant",
		stamp(2*time.Hour) + " gpu-west NonCompliant", ""}, "\n")}}
	newClient, _ := fakeHub(interceptor.Funcs{}, root, history,
		copyOf("gpu-east", "Compliant; notification - namespaces [prod] found as specified", 5*time.Minute),
		copyOf("gpu-west", "NonCompliant; violation - namespaces [prod] not found", 2*time.Minute))
	out, _, err := runDescribe(newClient, "policy", "netpol", "-n", "gov")
	if err != nil {
		t.Fatal(err)
	}
	want := lines(
		"Name:           netpol",
		"Namespace:      gov",
		"Age:            120m",
		"Remediation:    inform (overrides the templates' when set)",
		"Compliance:     NonCompliant (1 of 3 clusters comply)",
		"Templates:",
		"  0: ConfigurationPolicy netpol-ns",
		"Placement:",
		"  BINDING    PLACEMENT   POLICYSET",
		"  training   training    -",
		"Clusters:",
		"  CLUSTER    COMPLIANCE     TEMPLATE    LATEST MESSAGE                                                   SINCE",
		"  gpu-east   Compliant      netpol-ns   Compliant; notification - namespaces [prod] found as specified   5m",
		"  gpu-west   NonCompliant   netpol-ns   NonCompliant; violation - namespaces [prod] not found            2m",
		"  edge-1     -              -           -                                                                -",
		"Compliance history (periods not Compliant, newest first):",
		"  CLUSTER    STATE          FROM                   TO                     FOR",
		"  gpu-west   NonCompliant   "+stamp(2*time.Hour)+"   now                    1h0m0s",
		"  gpu-west   NonCompliant   "+stamp(time.Hour)+"   "+stamp(90*time.Minute)+"   30m0s",
	)
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	// An auditor's question: when did gpu-west stop complying, and for how long.
	out, _, err = runDescribe(newClient, "policy", "netpol", "-n", "gov", "--cluster", "gpu-west")
	if err != nil {
		t.Fatal(err)
	}
	wantTail := lines(
		"Clusters:",
		"  CLUSTER    COMPLIANCE     TEMPLATE    LATEST MESSAGE                                          SINCE",
		"  gpu-west   NonCompliant   netpol-ns   NonCompliant; violation - namespaces [prod] not found   2m",
		"Compliance history of gpu-west (newest first):",
		"  CLUSTER    STATE          FROM                   TO                     FOR",
		"  gpu-west   NonCompliant   "+stamp(2*time.Hour)+"   now                    1h0m0s",
		"  gpu-west   Compliant      "+stamp(90*time.Minute)+"   "+stamp(2*time.Hour)+"   30m0s",
		"  gpu-west   NonCompliant   "+stamp(time.Hour)+"   "+stamp(90*time.Minute)+"   30m0s",
		"  gpu-west   Compliant      "+stamp(0)+"   "+stamp(time.Hour)+"   1h0m0s",
	)
	if got := out[strings.Index(out, "Clusters:"):]; got != wantTail {
		t.Errorf("--cluster gpu-west (-want +got):\n%s", cmp.Diff(wantTail, got))
	}
	// A ConfigMap of that name the hub did not make is not shown as the policy's history.
	delete(history.Labels, compliancehistory.Label)
	forged, _ := fakeHub(interceptor.Funcs{}, root, history)
	if out, _, err = runDescribe(forged, "policy", "netpol", "-n", "gov"); err != nil || !strings.Contains(out, "Compliance history: none recorded") {
		t.Errorf("an unlabelled ConfigMap was read as the history: %v\n%s", err, out)
	}
	if _, _, err := runDescribe(newClient, "policy", "nope", "-n", "gov"); err == nil || !strings.Contains(err.Error(), "no Policy nope in namespace gov") {
		t.Errorf("a missing policy: %v", err)
	}
}
