// Package compliancehistory is the format of the compliance history the hub keeps for each root
// policy, and the reading of it: every change of a cluster's compliance with the policy, with
// its time, kept in ConfigMap <policy>.compliance-history in the policy's namespace, bounded to
// MaxEntries (the oldest go first). OCM keeps 10 messages per template and cluster; an auditor
// asks "when did gpu-west stop complying, and for how long", which Periods answers.
//
// The hub (internal/hub/policy) writes it; the CLI (flotilla describe policy) and the dashboard
// read it.
package compliancehistory
