// Package builtinaddon tests Flotilla's built-in add-ons against a real hub and spoke: the hub's
// ClusterManagementAddOn for each, the agent switching resource-usage on and off with its
// ManagedClusterAddOn, its ResourceUsage, the hub's fleet-normalised scores and a gang-fit
// placement following a real GPU Job on simulated nodes, what the agent's identity may not do,
// and objects of the same names that someone else wrote, left alone.
package builtinaddon
