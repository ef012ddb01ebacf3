// Package multikueue tests the hub's MultiKueue worker credentials (internal/hub/kueue's
// Credentials, the agent's built-in add-on multikueue-worker, package kueueworker) against a real
// hub and two real spokes with their registration, work and add-on agents: the token the hub
// composes into each worker's kubeconfig can do what MultiKueue needs on its worker and nothing
// else, agents can write their own token and nothing else, tokens rotate, and a cluster that
// leaves the placement loses its credentials.
package multikueue
