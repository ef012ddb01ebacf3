package get

import (
	"fmt"
	"io"
	"strings"

	"k8s.io/utils/clock"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/internal/cli/printing"
)

// printPolicies writes [NAMESPACE] NAME REMEDIATION COMPLIANCE CLUSTERS NONCOMPLIANT AGE.
// CLUSTERS counts, for a root policy, the clusters that comply of those it is placed on
// ("2/3"); NONCOMPLIANT names the first three that do not, and how many more. A cluster's copy
// (`-c CLUSTER`) shows its own compliance, with "-" in both.
func printPolicies(w io.Writer, list *policyv1.PolicyList, clk clock.PassiveClock, allNamespaces bool) error {
	header := []string{"NAME", "REMEDIATION", "COMPLIANCE", "CLUSTERS", "NONCOMPLIANT", "AGE"}
	if allNamespaces {
		header = append([]string{"NAMESPACE"}, header...)
	}
	t := printing.NewTable(w, header...)
	for i := range list.Items {
		p := &list.Items[i]
		clusters, bad := "-", "-"
		if !p.IsReplicated() {
			clusters, bad = complianceCounts(p.Status.Status)
		}
		cells := []string{p.Name, printing.OrDash(strings.ToLower(string(p.Spec.RemediationAction))), printing.OrDash(string(p.Status.ComplianceState)),
			clusters, bad, printing.Age(p.CreationTimestamp, clk)}
		if p.Spec.Disabled {
			cells[2] = "Disabled"
		}
		if allNamespaces {
			cells = append([]string{p.Namespace}, cells...)
		}
		t.Row(cells...)
	}
	return t.Flush()
}

// complianceCounts is "compliant/placed" and the non-compliant clusters, at most three named.
func complianceCounts(status []*policyv1.CompliancePerClusterStatus) (string, string) {
	compliant := 0
	var bad []string
	for _, s := range status {
		switch s.ComplianceState {
		case policyv1.Compliant:
			compliant++
		case policyv1.NonCompliant:
			bad = append(bad, s.ClusterName)
		}
	}
	names := "-"
	if len(bad) > 0 {
		names = strings.Join(bad[:min(3, len(bad))], ",")
		if len(bad) > 3 {
			names += fmt.Sprintf(" +%d", len(bad)-3)
		}
	}
	return fmt.Sprintf("%d/%d", compliant, len(status)), names
}
