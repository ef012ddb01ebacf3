// Package registration is the spoke side of cluster registration: the agent joins its cluster to
// the hub, keeps a client certificate for it, and proves it is alive.
//
// Joining, as OCM does it: with a low-privilege bootstrap kubeconfig the agent creates its
// ManagedCluster and a certificate request for system:open-cluster-management:<cluster>:<agent>
// in the cluster's agent groups. When an administrator has approved the request and accepted the
// cluster (`flotilla accept`), the hub's kube-controller-manager signs the certificate; the agent
// stores it, with its key, as a kubeconfig in a Secret on the spoke. A restarted agent finds the
// Secret and does not register again. From 80% of the certificate's lifetime the agent requests
// a new one with its own identity, which the hub approves by itself. The agent waits for a
// certificate a bounded time (ApprovalTimeout, RenewalApprovalTimeout) and then asks again; a
// denied or deleted request is asked again after a backoff. The request machinery (FileRequest,
// CheckRequest, EndsWait, RenewAt) also serves the add-on agent's certificates. Credentials the hub refuses (401) or
// that expired send the agent back to the bootstrap kubeconfig to register again.
//
// Once accepted, the agent renews the Lease managed-cluster-lease in its namespace on the hub
// every lease period plus up to 25% jitter and reports ManagedClusterJoined,
// ManagedClusterConditionAvailable (from the spoke's /livez) and the cluster's inventory
// (inventory.go): capacity and allocatable of Ready nodes, the Kubernetes version, ClusterClaims,
// and GPU inventory by model as claims named in api/cluster/v1/gpu_claims.go. Status is written
// only when it changed.
//
// The agent is a set of independent loops (Agent.Loops lists them, and internal/agent/loop runs
// them): client certificate, acceptance, lease, inventory and status. Each does one thing on its own schedule
// and reads what the others learned from goroutine-safe holders at every round: the hub
// credentials (HubAccess, which the work and add-on agents share), the last ManagedCluster read
// and the spoke's inventory. So a renewal waiting for approval or a spoke that does not answer
// never delays the lease. Every failure is logged with what would fix it (explain.go).
package registration
