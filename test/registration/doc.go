// Package registration tests cluster registration end to end against a real hub and real spokes:
// the hub's controllers and the agents run in the test process, every API call goes to real
// kube-apiservers, and certificates are signed by the hub's real kube-controller-manager.
package registration
