// Package workstatus computes the status a work agent reports for a ManifestWork, with no API
// calls: it is given the live objects and returns conditions and values, so the same functions
// serve the agent and its tests.
//
//   - Feedback reads a manifest's feedbackRules (WellKnownStatus for Deployment, Job, Pod,
//     StatefulSet and DaemonSet; JSONPaths, evaluated with client-go's jsonpath against the object,
//     or against its status when the path finds nothing at the top) and returns the values and the
//     StatusFeedbackSynced condition.
//   - Conditions evaluates conditionRules (WellKnownConditions, CEL over the variable object) and
//     the default Available condition (the object exists).
//   - Aggregate derives the work's Applied, Available, Progressing, Degraded and Complete (and any
//     rule-set condition) from the per-manifest conditions.
//   - Merge writes computed conditions into existing ones (keeping transition times, dropping the
//     conditions of removed rules) and Changed says whether a status write is due.
//
// The semantics are OCM's (names of well-known values, reasons, CEL helpers such as
// hasConditions, the aggregation rules); where OCM only declares a condition (Progressing and
// Degraded without rules), Aggregate derives it from Applied and Available and says so in its doc.
// Callers set the per-manifest Applied condition themselves: only they know the apply outcome.
package workstatus
