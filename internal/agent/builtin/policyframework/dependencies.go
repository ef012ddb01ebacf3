package policyframework

import (
	"fmt"
	"strings"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
)

// dependencyCheck is what a policy template's dependencies say: pending lists those not yet in
// the state they must be in ("Policy ns.name"), invalid says why one cannot be checked.
type dependencyCheck struct {
	pending []string
	invalid string
}

// checkDependencies checks template j of p against spec.dependencies and the template's
// extraDependencies, as OCM's framework does: a Policy is the cluster's copy of that root
// (namespace defaulting to p's root's), whose compliance this cluster reports; a
// ConfigurationPolicy is the one of that name in the cluster's namespace on the cluster. One that
// does not exist is pending.
func checkDependencies(p *policyv1.Policy, j int, copies map[string]*policyv1.Policy, cps map[string]*policyv1.ConfigurationPolicy) dependencyCheck {
	deps := append([]policyv1.PolicyDependency(nil), p.Spec.Dependencies...)
	if j < len(p.Spec.PolicyTemplates) && p.Spec.PolicyTemplates[j] != nil {
		deps = append(deps, p.Spec.PolicyTemplates[j].ExtraDependencies...)
	}
	rootNS, _, _ := strings.Cut(p.Labels[policyv1.RootPolicyLabel], ".")
	var out dependencyCheck
	for i, d := range deps {
		group, _, _ := strings.Cut(d.APIVersion, "/")
		if d.APIVersion != "" && group != policyv1.GroupVersion.Group {
			out.invalid = fmt.Sprintf("dependency %d (%s %s of %s) is not a policy: dependencies name a Policy or a ConfigurationPolicy of %s",
				i, d.Kind, d.Name, d.APIVersion, policyv1.GroupVersion.Group)
			return out
		}
		var state policyv1.ComplianceState
		var shown string
		switch d.Kind {
		case policyv1.Kind:
			ns := d.Namespace
			if ns == "" {
				ns = rootNS
			}
			shown = ns + "." + d.Name
			if c := copies[shown]; c != nil {
				state = c.Status.ComplianceState
			}
		case "ConfigurationPolicy":
			shown = d.Name
			if cp := cps[d.Name]; cp != nil && cp.Status.LastEvaluatedGeneration == cp.Generation {
				state = policyv1.ComplianceState(cp.Status.ComplianceState)
			}
		default:
			out.invalid = fmt.Sprintf("dependency %d is a %s, which this cluster cannot check: name a Policy or a ConfigurationPolicy "+
				"(a PolicySet's policies, one by one)", i, d.Kind)
			return out
		}
		if !strings.EqualFold(string(state), string(d.Compliance)) {
			out.pending = append(out.pending, d.Kind+" "+shown)
		}
	}
	return out
}

// pendingResult is the result of a template whose dependencies are pending (OCM's words).
func pendingResult(pending []string) observed {
	return observed{state: policyv1.Pending, message: fmt.Sprintf("%s; template-error; Dependencies were not satisfied: %d dependencies are still pending (%s)",
		policyv1.Pending, len(pending), strings.Join(pending, ", "))}
}
