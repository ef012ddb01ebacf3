// Package agent is `flotilla agent`: registers a managed cluster with the hub and keeps it
// registered (lease, status, certificate rotation), and runs the work agent that applies the
// cluster's ManifestWorks with the same hub credentials.
package agent
