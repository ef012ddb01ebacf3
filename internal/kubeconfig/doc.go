// Package kubeconfig writes the small kubeconfigs Flotilla hands out: an admin's for a local
// cluster, an agent's with its client certificate, the bootstrap one with a token. Each has one
// cluster, one user and one context, with everything inline so the file works from anywhere.
package kubeconfig
