// Package builtins gives each of Flotilla's built-in add-ons (internal/contract/builtinaddon) a
// ClusterManagementAddOn on the hub, so that users list them with `flotilla get addons` and
// switch them on per cluster with `flotilla addon enable NAME --clusters ...` (a
// ManagedClusterAddOn), or on many with an install strategy they set on it.
//
// The leader creates the ClusterManagementAddOns that are missing when it starts, with install
// strategy Manual (off everywhere until switched on) and the label addon.flotilla.io/built-in.
// It never changes one that exists: users may edit it (an install strategy, say), and one someone
// else made under that name is theirs; the hub logs that it left it.
package builtins
