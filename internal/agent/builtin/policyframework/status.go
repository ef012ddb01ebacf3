package policyframework

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
)

// HistoryLimit is how many compliance messages a template's history keeps (OCM's 10).
const HistoryLimit = 10

// observed is what the cluster says of one template: its compliance and message, or nothing yet.
type observed struct {
	state   policyv1.ComplianceState
	message string
	// evaluated is the template's generation the result is of (0: not a ConfigurationPolicy's
	// result); a result of a generation not reported before is added to the history even when
	// its message is the same, so the hub sees that the cluster evaluated the new spec (a
	// rollout waits for it).
	evaluated int64
	fresh     bool
	// related are the objects not as specified, with their differences.
	related []policyv1.RelatedObject
}

// maxRelated bounds the related objects a template reports to the hub.
const maxRelated = 20

// observe reads a ConfigurationPolicy's result as OCM's framework reports it: "Compliant;
// notification - namespaces [prod] found as specified". A policy not yet evaluated at its
// generation has no result.
func observe(cp *policyv1.ConfigurationPolicy) observed {
	if cp == nil || cp.Status.ComplianceState == "" || cp.Status.LastEvaluatedGeneration != cp.Generation {
		return observed{}
	}
	var parts []string
	for _, d := range cp.Status.CompliancyDetails {
		for _, c := range d.Conditions {
			parts = append(parts, c.Type+" - "+c.Message)
		}
	}
	state := policyv1.ComplianceState(cp.Status.ComplianceState)
	var related []policyv1.RelatedObject
	for _, r := range cp.Status.RelatedObjects {
		if r.Compliant != string(policyv1.Compliant) && len(related) < maxRelated {
			related = append(related, r)
		}
	}
	return observed{state: state, message: string(state) + "; " + strings.Join(parts, "; "), evaluated: cp.Generation, related: related}
}

// problem is the result of a template the cluster cannot have.
func problem(why string) observed {
	return observed{state: policyv1.NonCompliant, message: string(policyv1.NonCompliant) + "; violation - " + why}
}

// policyStatus is p's status from its templates' results (by template, in order), keeping
// each template's history and adding to it when its message changes.
func policyStatus(p *policyv1.Policy, names []string, results []observed, now time.Time) policyv1.PolicyStatus {
	before := map[string]*policyv1.DetailsPerTemplate{}
	for _, d := range p.Status.Details {
		if d != nil {
			before[d.TemplateMeta.Name] = d
		}
	}
	st := policyv1.PolicyStatus{}
	pending, silent, nonCompliant := false, false, false
	for i, r := range results {
		d := &policyv1.DetailsPerTemplate{TemplateMeta: metav1.ObjectMeta{Name: names[i]}, ComplianceState: r.state, RelatedObjects: r.related}
		if b := before[names[i]]; b != nil {
			d.History = b.History
		}
		if r.message != "" && (len(d.History) == 0 || d.History[0].Message != r.message || r.fresh) {
			entry := policyv1.ComplianceHistory{LastTimestamp: metav1.NewTime(now.UTC().Truncate(time.Second)), Message: r.message,
				EventName: eventName(p.Name, r.message, now)}
			d.History = append([]policyv1.ComplianceHistory{entry}, d.History...)
		}
		if len(d.History) > HistoryLimit {
			d.History = d.History[:HistoryLimit]
		}
		st.Details = append(st.Details, d)
		ignore := i < len(p.Spec.PolicyTemplates) && p.Spec.PolicyTemplates[i] != nil && p.Spec.PolicyTemplates[i].IgnorePending
		switch r.state {
		case policyv1.NonCompliant:
			nonCompliant = true
		case policyv1.Pending:
			pending = pending || !ignore
		case policyv1.Compliant:
		default:
			silent = true
		}
	}
	switch {
	case len(results) == 0:
	case nonCompliant:
		st.ComplianceState = policyv1.NonCompliant
	case pending:
		st.ComplianceState = policyv1.Pending
	case silent:
	default:
		st.ComplianceState = policyv1.Compliant
	}
	return st
}

// eventName is <policy>.<hash>, as OCM names the events its history lists.
func eventName(policy, message string, now time.Time) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\n%s\n%d", policy, message, now.UnixNano()))
	return policy + "." + hex.EncodeToString(sum[:8])
}
