// Package builtinaddon tests Flotilla's built-in add-ons against a real hub and spoke: the hub's
// ClusterManagementAddOn for each, the agent switching resource-usage on and off with its
// ManagedClusterAddOn, its scores following GPU pods on simulated nodes, and what the agent's
// identity may not do with them.
package builtinaddon
