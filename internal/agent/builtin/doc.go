// Package builtin runs Flotilla's built-in add-ons: optional capabilities of `flotilla agent`
// that users switch on and off per cluster exactly as they do any OCM add-on, with a
// ManagedClusterAddOn named after the add-on in the cluster's namespace on the hub (`flotilla
// addon enable NAME --clusters ...`, or an install strategy of its ClusterManagementAddOn, which
// the hub creates for every built-in add-on).
//
// Manager.Sync is called with the cluster's ManagedClusterAddOns whenever they change (the
// add-on agent's watch, internal/agent/addon): it starts the built-in add-ons that have one,
// stops those that lost theirs and cleans up after them, starts again an add-on whose run ended
// with an error (after a backoff) or that runs with hub credentials that have since been
// renewed, and reports each one's health in its ManagedClusterAddOn's status: health check mode
// Customized (the agent, not a Lease, says whether the add-on works) and the Available condition,
// True while it runs, False with the error when its last run failed.
//
// A built-in add-on acts on the hub with the agent's own identity, in the cluster's namespace
// only (internal/hub/registration's namespace role lists what built-in add-ons may write there).
//
// A sync loop learns of changes from a Mirror (the objects of a kind, listed once and then
// watched, read from memory on every pass) or from Watch (a signal only), and is not woken by its
// own writes (OwnWrites): an idle cluster's add-ons cost its API servers and the hub nothing, and
// a pass right after a write compares with what it wrote (Mirror.Items), not with a mirror that has
// not caught up yet.
package builtin
