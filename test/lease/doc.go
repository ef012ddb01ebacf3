// Package lease tests the hub's lease monitor and taint controllers against a real kube-apiserver:
// the test plays the agent, renewing the Lease and reporting Available itself, and checks that a
// lapsed lease makes the cluster Unknown and unreachable within the grace period, with no other
// event to wake the controller, and that the taints follow the Available condition.
package lease
