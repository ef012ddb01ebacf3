// Package hubinit is `flotilla init`: prepares a hub cluster (CRDs, the bootstrap identity) and
// prints the command that joins a cluster to it.
package hubinit
