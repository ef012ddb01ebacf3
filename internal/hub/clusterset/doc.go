// Package clusterset owns ManagedClusterSets and ManagedClusterSetBindings on the hub: which
// clusters belong to a set, whether a set is empty, whether a binding is in effect, and the two
// sets every hub has.
//
// Membership is a label question, answered by one pure function (Selector, and IsMember, Members
// and SetsOf built on it) that the placement scheduler reuses: a set with selector type
// ExclusiveClusterSetLabel holds the clusters labeled
// cluster.open-cluster-management.io/clusterset=<set>, so a cluster is in at most one such set; a
// set with selector type LabelSelector holds the clusters its spec.clusterSelector.labelSelector
// matches, and an empty selector matches every cluster. As in OCM, the hub creates the set
// "default" (by label) and the set "global" (empty selector) when it starts, and labels every
// cluster that has no clusterset label with clusterset=default, so every cluster is in a set.
//
// A binding only needs its set to exist here. Who may join a cluster to a set
// (managedclustersets/join) or bind a set to a namespace (managedclustersets/bind) is checked at
// admission by the hub's webhook (internal/hub/webhook), as OCM does.
package clusterset
