// Package dynamicscoring is the hub side of OCM contrib's dynamic scoring.
//
// The hub accepts DynamicScorers (and DynamicScoringConfigs) from one namespace only, Namespace
// (--dynamic-scoring-namespace): one elsewhere is never contacted nor listed for agents, and is
// marked Inactive with the condition Accepted=False naming the namespace to use. Requests go
// through internal/egress (no redirects; no loopback, link-local or metadata
// address unless allowed), and Summarize refuses a /config that would move a token's host.
//
// ScorerReconciler health-checks every DynamicScorer: it GETs /healthz on the host of
// spec.configURL and, with configSyncMode Full, the configuration at spec.configURL, every
// scoring interval, and writes status.healthStatus (Active, Inactive) and
// status.lastSyncedConfig; a failure is also an event that names the field and the fix.
//
// ConfigReconciler tells each cluster's agent which scorers to run. Agents read only their
// cluster's namespace on the hub, so for every cluster whose ManagedClusterAddOn dynamic-scoring
// exists the hub writes there the ConfigMap dynamic-scoring-config (as OCM contrib's hub writes
// it to the agent's namespace) listing the Active scorers that no DynamicScoringConfig mask
// filters out, each resolved into full endpoints (see BuildSummaries). The hub updates and
// deletes only ConfigMaps that carry builtinaddon.Label.
package dynamicscoring
