// Package policy tests the hub's policy propagator (internal/hub/policy) against a real hub API
// server, with the whole hub running in the test process as its generated roles and real
// Placements scheduled by the hub's placement controller. There are no spokes: the tests play the
// clusters' governance-policy-framework by writing the replicated policies' status. They apply
// policy-collection's stable policies unchanged (testdata), follow decision changes, edits,
// disabling and unbinding, check the root's and a PolicySet's status field by field, and that a
// hand-made policy in a cluster's namespace is neither adopted, updated nor counted.
package policy
