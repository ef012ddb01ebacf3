// Package agent is `flotilla agent`: registers a managed cluster with the hub and keeps it
// registered (lease, status, certificate rotation).
package agent
