// Package certs makes the certificates Flotilla signs itself: a certificate authority and the
// serving and client certificates it issues (ECDSA P-256). Local clusters keep theirs in files;
// the hub's webhook keeps its own in memory.
package certs
