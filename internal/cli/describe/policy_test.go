package describe

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
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
	newClient, _ := fakeHub(interceptor.Funcs{}, root,
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
	)
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if _, _, err := runDescribe(newClient, "policy", "nope", "-n", "gov"); err == nil || !strings.Contains(err.Error(), "no Policy nope in namespace gov") {
		t.Errorf("a missing policy: %v", err)
	}
}
