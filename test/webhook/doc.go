// Package webhook tests the hub's validating admission webhook against a real hub API server: the
// hub runs in the test process with its webhook on a free loopback port, and requests are made as
// limited users by impersonation, with RBAC roles the tests create. It checks that accepting a
// cluster, joining a set and binding a set each need their permission and are refused with a
// message saying which, that an agent cannot change taints even where an administrator let it
// update its cluster, and that an administrator may do all of it; that only a cluster's own agent
// may change its status.clusterClaims, the administrator included, while other status writes go
// through even with no hub; and that creating a FederatedLearning, or changing its spec, needs
// the requester's bind on its sets and create on the server's and the clients' workloads, and on
// the Placement, Service and claim the hub makes, and an administrator's grant for HostPath.
//
// The hub runs as a service account bound only to its generated roles (config/rbac,
// testenv.HubIdentity), so these tests also show that the roles are enough (the hub binds a
// FederatedLearning's sets through the same webhook), and TestHubRoleRefuses shows what they
// keep the hub from.
package webhook
