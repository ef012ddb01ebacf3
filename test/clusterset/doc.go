// Package clusterset tests ManagedClusterSets and ManagedClusterSetBindings against a real hub API
// server: the default sets and label, membership by label and by selector, the ClusterSetEmpty
// condition as clusters join and leave, and a binding's Bound condition following its set. The
// clusterset controllers run in the test process in a manager of their own.
package clusterset
