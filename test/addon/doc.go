// Package addon tests the hub's add-on lifecycle (internal/hub/addon) against a real hub API
// server, with the whole hub running in the test process as its generated roles
// (testenv.HubIdentity) and real Placements scheduled by the hub's placement controller. There
// are no spokes: the tests play the add-on's manager and the work agent (a ManifestWork of the
// add-on, rendered with its desired configurations, Applied and Available, and the add-on's
// ManifestApplied condition), from which the hub's progressing controller completes each add-on.
// They cover a Progressive install and upgrade over 3 clusters, clusters leaving a placement,
// users' add-ons that the hub never adopts or deletes, deleting the ClusterManagementAddOn
// (garbage collection of the hub's add-ons), the Manual strategy with config precedence, and bad
// input (a missing Placement, a missing configuration) beside an add-on that keeps working.
package addon
