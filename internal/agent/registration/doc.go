// Package registration is the spoke side of cluster registration: the agent joins its cluster to
// the hub, keeps a client certificate for it, and proves it is alive.
//
// Joining, as OCM does it: with a low-privilege bootstrap kubeconfig the agent creates its
// ManagedCluster and a certificate request for system:open-cluster-management:<cluster>:<agent>
// in the cluster's agent groups. When an administrator has approved the request and accepted the
// cluster (`flotilla accept`), the hub's kube-controller-manager signs the certificate; the agent
// stores it, with its key, as a kubeconfig in a Secret on the spoke. A restarted agent finds the
// Secret and does not register again. Before the certificate reaches 80% of its lifetime the agent
// requests a new one with its own identity, which the hub approves by itself.
//
// Once accepted, the agent renews the Lease managed-cluster-lease in its namespace on the hub
// every lease period and reports ManagedClusterJoined, ManagedClusterConditionAvailable (from the
// spoke's /livez) and the cluster's inventory (inventory.go): capacity and allocatable of Ready
// nodes, the Kubernetes version, ClusterClaims, and GPU inventory by model as claims named in
// api/cluster/v1/gpu_claims.go. Status is written only when it changed.
package registration
