// Package governance tests OCM's governance API end to end on a real hub and a real spoke: the
// hub's propagator places policy-collection's stable policies (test/policy/testdata, unchanged), the
// cluster's built-in add-ons governance-policy-framework and config-policy-controller (run as the
// agent runs them, with the agent's hub identity) put their ConfigurationPolicies on the spoke,
// evaluate them in inform and enforce, put drift right, and report compliance back to the
// replicated and root policies, field by field. It also checks what the agent's identity cannot
// do with policies, and that a template the cluster cannot evaluate is reported on its own.
package governance
