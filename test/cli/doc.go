// Package cli runs the CLI's read commands for ManifestWorks (`flotilla get works`, `flotilla
// describe work`) through the flotilla root command against a real hub API server with the CRDs
// installed: a ManifestWork is created and its status written through the status subresource as
// an administrator (as the cluster's work agent would), so what the commands print is what the API
// server's schema keeps (feedback values of every type, rule conditions); a missing work and an
// unreachable hub give errors naming the work and the fix.
package cli
