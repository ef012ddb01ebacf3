// Package builtinaddon is the catalog of Flotilla's built-in add-ons: capabilities of `flotilla
// agent` that users switch on per cluster with a ManagedClusterAddOn, as any OCM add-on. The hub
// creates a ClusterManagementAddOn for each (internal/hub/builtins), so that they are listed and
// enabled like the others; the agent runs them (internal/agent/builtin),
// except flower-addon, an AddOnTemplate the hub keeps (internal/hub/flower).
package builtinaddon
