// Package workreplicaset is the hub's ManifestWorkReplicaSet controller (OCM's
// work.open-cluster-management.io/v1alpha1): for each set it reads the PlacementDecisions of the
// Placements in spec.placementRefs (label cluster.open-cluster-management.io/placement, groups
// from the decision-group labels), asks internal/core/rollout which clusters the template goes to now
// under each placementRef's rolloutStrategy, and creates or updates one ManifestWork per chosen
// cluster, named after the set, in the cluster's namespace. A cluster's rollout state is read
// from its ManifestWork's conditions as OCM does (Applied, Progressing and Degraded for the
// work's generation; see clusterState). ManifestWorks of clusters no placement selects any more,
// and of placements the set no longer names, are deleted. A missing Placement stops the set
// (PlacementVerified=False, PlacementDecisionNotFound, naming it) without creating or deleting
// anything. A decided cluster the hub puts nothing in (internal/hub/delivery: not accepted, being
// deleted, or its namespace terminating) gets no ManifestWork and takes no part in the rollout;
// PlacementVerified's message names it with why (OCM's own controller relies on its placements
// dropping deleted clusters; Flotilla's namespaces of denied clusters are being emptied too).
// ManagedClusters and Namespaces are watched, so that such a cluster accepted again gets its
// work. Status: summary and per-placement summaries (total, applied, available, progressing,
// degraded, updated, desired, and available decision groups as "n/m"), and the conditions
// PlacementVerified, PlacementRolledOut and ManifestworkApplied with OCM's reasons; written only
// when it changes, with ObservedGeneration. The set is requeued when a soak time
// (minSuccessTime) or a progressDeadline ends.
//
// Two ideas:
//
//   - Ownership without owner references. ManifestWorks live in cluster namespaces, and an owner
//     reference to an object in another namespace is not allowed (the garbage collector would
//     delete the dependent), so, as in OCM, a ManifestWork carries the label
//     work.open-cluster-management.io/manifestworkreplicaset=<namespace>.<name> and the set
//     carries the finalizer work.open-cluster-management.io/manifest-work-cleanup, removed once
//     its ManifestWorks are deleted (cascadeDeletionPolicy Background) or gone (Foreground). Only
//     a ManifestWork in the set's own namespace also gets a controller reference. Because anyone
//     can copy a label, a ManifestWork is the set's own only when it also carries the set's UID
//     (annotation work.flotilla.io/manifestworkreplicaset-uid): a hand-made ManifestWork with the
//     label, or one of the set's name in a chosen cluster's namespace, is never updated, adopted
//     or deleted; the latter is reported in PlacementRolledOut's message.
//
//   - A change is rolled out by treating every ManifestWork whose spec differs from the template
//     as not yet applied: the rollout strategy then updates clusters as it would create them
//     (maxConcurrency, groups, maxFailures). Conditions older than the work's generation make a
//     cluster ToApply, so that a just-updated work is not taken for a successful one.
package workreplicaset
