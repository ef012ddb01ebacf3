// Package kueuequeues tests the built-in add-on kueue-queues (internal/agent/builtin/kueuequeues)
// against a real hub and a spoke with simulated GPU nodes (2 x 8 H100, 1 x 4 A100, 1 without GPUs)
// and Kueue's manager (internal/local/localk8s, StartKueue): without Kueue the add-on says to install
// it; with Kueue its flavors, ClusterQueue and LocalQueue appear with the nodes' sums as quotas,
// Kueue makes the ClusterQueue Active and admits a GPU Job to the H100 flavor; quotas follow nodes
// added and removed; model labels that need sanitizing, or sanitize alike, give distinct valid
// flavors; someone else's ClusterQueue and LocalQueue of the add-on's names are left alone and
// reported; switched off, the add-on's objects go and theirs stay. It needs the Kueue build of
// tools/build-kueue.sh. Build tag integration.
package kueuequeues
