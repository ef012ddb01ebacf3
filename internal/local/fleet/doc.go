// Package fleet reads and checks fleet files: the YAML that says which clusters a local dev
// fleet has, with their labels, cluster claims and simulated node pools. The default fleet
// (gpu-east, gpu-west, edge-1) ships in the binary; scripts and later features rely on its names.
//
// Validation collects every problem with its field path (clusters[1].nodePools[0].gpu.count), the
// way the Kubernetes API server reports invalid objects, so one run shows all there is to fix.
package fleet
