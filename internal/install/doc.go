// Package install puts Flotilla's CRDs on a cluster: server-side apply under the field manager
// "flotilla" (so that reapplying is idempotent and other managers' fields are kept), then a wait
// until each CRD is Established and its names accepted. A dry run asks the API server what would
// change without changing anything.
package install
