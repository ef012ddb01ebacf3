// Package delivery holds the one rule every hub controller follows before it creates a
// ManifestWork or a ManagedClusterAddOn in a cluster's namespace: the cluster must be accepted
// (spec.hubAcceptsClient), not being deleted, and its namespace not terminating.
//
// A denied or deleted cluster's namespace is being emptied by the registration controller
// (internal/hub/registration, cleanup.go): its add-ons first, then its works, while its agent keeps
// just the access it needs to remove what the works applied. A controller that recreated an
// add-on or a work there would undo that, pass after pass, until the cleanup timeout forced it:
// and a work created then would never be applied, since the agent is losing its access. OCM's
// add-on manager likewise deploys nothing on a cluster that is being deleted; Flotilla also
// counts a cluster the hub no longer accepts, whose agent it no longer trusts.
//
// Controllers with a status say why they skip a cluster (Refusal.Message); the rule only
// prevents creating: what already exists is the cleanup's to remove.
package delivery
