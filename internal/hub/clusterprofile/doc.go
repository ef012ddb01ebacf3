// Package clusterprofile keeps the hub's SIG-Multicluster ClusterProfiles: in every namespace
// that a ManagedClusterSetBinding binds a set to, one ClusterProfile per cluster of the bound
// sets, named after the cluster, so that consumers (Kueue's MultiKueue, GitOps tools, KEP-5313
// schedulers) find the clusters a namespace may use without reading OCM's own APIs.
//
// The reconciler is keyed by namespace: it computes the whole desired set of profiles for a
// namespace with a pure function (desiredProfiles) from the namespace's bindings, the sets and the
// clusters, then creates, updates and deletes until the namespace holds exactly that. Only
// bindings whose Bound condition is True for their current generation count, so a binding to a
// missing or deleted set yields nothing. A cluster being deleted no longer has a profile, nor
// does a cluster that leaves every bound set, nor any cluster once the binding goes.
//
// A profile is the hub's when it carries the label x-k8s.io/cluster-manager=open-cluster-management;
// the reconciler never changes or deletes any other, and leaves a cluster without a profile
// in a namespace where someone else's ClusterProfile already has its name.
//
// A profile's status mirrors its ManagedCluster: version.kubernetes, one property per cluster
// claim, ControlPlaneHealthy from ManagedClusterConditionAvailable and Joined from
// ManagedClusterJoined (each Unknown until the cluster reports its source condition), and the
// hub's access provider, ProviderName, in status.accessProviders and status.credentialProviders:
// the cluster's API server address and CA from spec.managedClusterClientConfigs, offered only for
// an accepted cluster and an address the egress guard accepts, with AccessProviderReady saying
// why not otherwise (accessProvider). Other conditions and other providers' entries are left as
// other writers set them.
package clusterprofile
