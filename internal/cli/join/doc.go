// Package join is `flotilla join`: prepares a cluster to join a hub by storing the bootstrap
// kubeconfig and the cluster's name on it, after checking that the hub answers and that the
// bootstrap identity may register, so that `flotilla agent` needs nothing but the cluster.
package join
