// Package rollout decides, for one placement, which clusters a change goes to now: the rollout
// strategies All, Progressive and ProgressivePerGroup of OCM's RolloutStrategy
// (cluster.open-cluster-management.io/v1alpha1, api/cluster/v1alpha1), with minSuccessTime,
// progressDeadline, maxFailures, mandatoryDecisionGroups and maxConcurrency. It knows no workload
// kind: the ManifestWorkReplicaSet controller and add-on installs give it the placement's clusters
// with their decision groups and each cluster's rollout state (ToApply, Progressing, Succeeded,
// Failed, TimeOut, Skip, and when it entered that state), and apply the Result themselves.
// PlacementClusters reads a placement's clusters and decision groups for them.
//
// Decide reproduces OCM's rollout helper (open-cluster-management.io/sdk-go,
// pkg/apis/cluster/v1alpha1, RolloutHandler.GetRolloutCluster) decision for decision, quirks
// included, so that a strategy written for OCM rolls out the same way here:
//
//   - Clusters are taken in name order; decision groups in index order. A mandatory group named
//     by groupName means every group of that name; by groupIndex, that one group. Mandatory groups
//     go first and tolerate no failure; while any of their clusters (or any other cluster with a
//     state) is still to roll out or has timed out, nothing else starts.
//   - A cluster is in the rollout (ClustersToRollout) while it is ToApply, Progressing or Failed
//     within progressDeadline, or Succeeded within minSuccessTime; past progressDeadline it is
//     TimeOut (ClustersTimeOut) and counts as a failure, as Failed does. All has no soak time and
//     never stops for failures.
//   - maxFailures and maxConcurrency are a number or a percentage of the clusters (rounded up); a
//     value of 0, or more than there are clusters, means the default: 0 failures, and every
//     cluster at once. Progressive counts failures over all its clusters, ProgressivePerGroup
//     per group. When the failures exceed maxFailures the rollout stops (MaxFailureBreach):
//     clusters that never had the change do not get it.
//   - progressDeadline "None" or "" waits for ever; otherwise it is a Go duration that must start
//     with a number and a unit (h, m or s), as OCM's pattern says.
//
// Two differences, both for callers outside OCM's API server: an empty strategy type means All
// (the CRD defaults it), and ClusterStatus.Group is filled for every cluster that has a decision.
// Time comes from the clock the caller passes; RecheckAfter says when the next decision can differ
// (a soak time or a deadline ends), so that the caller requeues then instead of polling.
package rollout
