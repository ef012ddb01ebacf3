// Package addon is `flotilla addon enable|disable NAME --clusters A,B`: what `clusteradm addon
// enable` and `disable` do. Enable creates the ManagedClusterAddOn NAME in each cluster's namespace
// on the hub (the add-on's ClusterManagementAddOn must exist, and so must each ManagedCluster);
// disable deletes the ones a user made. An add-on that a ClusterManagementAddOn's install
// strategy put on a cluster (its controller reference names the ClusterManagementAddOn) is the
// hub's: disable leaves it and says to change the add-on's placements instead, since the hub
// would make it again. Each cluster is done on its own; one that fails does not stop the others,
// and the command fails at the end naming every cluster that did.
package addon
