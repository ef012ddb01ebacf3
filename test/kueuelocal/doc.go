// Package kueuelocal tests Kueue's manager run as a local process (internal/local/localk8s, StartKueue)
// on a real spoke: kube-apiserver, kube-controller-manager, kube-scheduler and kwok with simulated
// H100 nodes. A ResourceFlavor, a ClusterQueue with a 16-GPU quota and a LocalQueue admit GPU Jobs
// through Kueue's own webhooks and controllers; Jobs over the quota wait suspended until quota
// frees; a Job naming a LocalQueue that does not exist stays suspended. It needs the Kueue build of
// tools/build-kueue.sh (`make k8s-bin`). Build tag integration.
package kueuelocal
