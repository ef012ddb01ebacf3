// Package kueue is the hub's admission-check controller for Kueue's MultiKueue, compatible with
// OCM's: an AdmissionCheck (kueue.x-k8s.io/v1beta2) with spec.controllerName
// open-cluster-management.io/placement and spec.parameters naming a Placement in the Kueue
// namespace (kueue-system unless configured) makes the hub write, and keep current:
//
//   - a MultiKueueConfig named after the placement, listing its decided clusters (at most 20),
//     best first by the decisions' scores, ties by name;
//   - per decided cluster a MultiKueueCluster <cluster> whose kubeconfig is the Secret
//     multikueue-<cluster> (key kubeconfig) in the Kueue namespace;
//   - the AdmissionCheck's Active condition, with a reason saying what is missing when it is not.
//
// Two ideas. Everything the controller writes carries the label ManagedLabel and an owner
// reference to each AdmissionCheck that wants it (two checks naming placements that share a
// cluster share its MultiKueueCluster): an object without the label is someone else's and is
// never changed (the check says so), and the garbage collector removes an object when its last
// check goes. The Secrets the credentials controller writes also say whose token or kubeconfig
// they are (marks.go), and only such a Secret of the hub's is used as one. The controller does not write the kubeconfig Secrets (another part of the hub
// will): until they all exist the check is Active=False, CredentialsPending, naming them, or
// ClusterNotAccepted for a cluster the hub gives no credentials (internal/hub/delivery: not
// accepted, being deleted, or its namespace terminating; the credentials controller makes none
// for it and removes what it made). The
// hub neither caches nor watches Secrets: it reads each one from the API server, again every
// SecretPoll while some are missing, with get on secrets granted in the Kueue namespace only
// (docs/kueue.md; the hub's ClusterRole holds no Secrets).
//
// The hub runs the controller only when its API server serves kueue.x-k8s.io/v1beta2 (Served).
package kueue
