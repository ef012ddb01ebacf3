// Package gpuview reads a managed cluster's GPUs as `flotilla get clusters` shows them and
// `flotilla mcp` reports them, so that both say the same: the allocatable GPUs by model from the
// agent's claims (ByModel, Allocatable), and the live free figures from the cluster's
// ResourceUsage, which the built-in add-on resource-usage writes (Usage, FreeFigures).
//
// It only reads objects handed to it; it makes no API calls.
package gpuview
