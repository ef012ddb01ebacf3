// Package install is `flotilla install`: puts Flotilla's CRDs (embedded in the binary) on a cluster.
package install
