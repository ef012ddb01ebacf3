// Package clusteridentity holds the names by which a managed cluster's agent is known to the hub,
// as OCM defines them: its user and groups (the subject of its client certificate), the RBAC
// objects that grant it access, and the checks that a certificate request carries that identity.
// The hub's registration controllers and the agent both use it, so they cannot disagree.
package clusteridentity
