// Package clusterprofile tests the hub's ClusterProfiles against a real hub API server: profiles
// appear in a namespace when a set is bound there, mirror their clusters' status, and go when a
// cluster leaves the set or is deleted, or when the binding goes; ClusterProfiles the hub does
// not manage are left alone. The clusterprofile and clusterset controllers (the latter for the
// bindings' Bound condition) run in the test process in a manager of their own.
package clusterprofile
