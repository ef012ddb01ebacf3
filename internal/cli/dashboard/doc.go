// Package dashboard is `flotilla dashboard`: it serves the fleet's web dashboard
// (internal/hub/dashboard) on a loopback address with the kubeconfig's identity, as `kubectl proxy`
// serves the API, and prints its URL first.
package dashboard
