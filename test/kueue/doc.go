// Package kueue tests the hub's admission-check controller for Kueue's MultiKueue
// (internal/hub/kueue) against a real hub API server with Kueue's CRDs installed and no Kueue
// manager: Placements over ManagedClusters without agents, scored by AddOnPlacementScores, make
// MultiKueueConfigs and MultiKueueClusters; bad input gives clear conditions; other controllers'
// checks and other owners' objects are left alone. The hub runs on the Secret path
// (--kueue-credentials secret), whose kubeconfig Secrets these tests withhold and check; the
// ClusterProfile path needs Kueue's manager and is tested in test/multikueue. Build tag
// integration.
package kueue
