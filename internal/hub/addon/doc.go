// Package addon is the hub's add-on lifecycle, as OCM's addon manager runs it
// (addon.open-cluster-management.io/v1alpha1): installing each ClusterManagementAddOn (CMA) on
// clusters, resolving and rolling out its configurations, and the status that shows it.
//
// Reconciler works per CMA:
//
//   - Install strategy Manual: the hub creates nothing; users create ManagedClusterAddOns (MCAs).
//     Placements: every cluster in the PlacementDecisions of an installStrategy.placements[]
//     entry gets an MCA named after the add-on in its namespace, at once (as in OCM; the rollout
//     strategy paces configurations, below). The hub's MCAs carry a controller reference to the
//     CMA: MCAs of clusters no placement selects any more are deleted (not while a placement's
//     decisions cannot be read). Deleting the CMA deletes them too: the CMA carries the finalizer
//     addon.flotilla.io/managedclusteraddon-cleanup, removed once the hub has deleted them, so
//     that this does not depend on the garbage collector (which cannot list a kind whose
//     conversion webhook is down).
//     An MCA without that reference is a user's: never deleted or adopted, reported in the
//     install progression's message when it sits in a selected cluster. A missing Placement adds
//     no cluster (as in OCM) and its install progression says so (PlacementNotFound).
//     A selected cluster the hub does not accept, that is being deleted, or whose namespace is
//     terminating (internal/hub/delivery) gets no MCA and takes no part in the rollout: its
//     namespace is being emptied (OCM's add-on manager likewise installs nothing on a cluster
//     being deleted). It gets the add-on once accepted again (ManagedClusters and Namespaces are
//     watched for that).
//   - Configurations, in OCM's order of precedence: spec.supportedConfigs[].defaultConfig, then
//     the serving placement's configs, then the MCA's spec.configs, group and resource at a time
//     (configs.go). A cluster several placements select is served by the last entry. Each
//     configuration object is read from the API server and hashed as OCM does (SpecHash: SHA-256
//     of the JSON of its spec); the hashes go to MCA status.configReferences[].desiredConfig, CMA
//     status.defaultconfigReferences and installProgressions[].configReferences. A reference
//     that does not resolve is named, with its field, in the MCA's Configured condition
//     (ConfigurationNotFound) and in the install progression; other add-ons are unaffected.
//   - Rollout: per placement, internal/core/rollout decides (All, Progressive, ProgressivePerGroup)
//     which MCAs get their desired configurations now. An MCA's state is OCM's: ToApply while its
//     configReferences differ from the desired ones, Progressing or Failed (Progressing
//     condition's reason) until lastAppliedConfig equals desiredConfig, then Succeeded. MCAs no
//     placement serves get them at once. MCA condition Configured: True once reached, False
//     (ConfigurationsNotConfigured) while waiting. CMA installProgressions: Progressing
//     Installing/Upgrading "n/total ..." and then InstallSucceed/UpgradeSucceed, with what holds
//     the rollout (failures, timeouts, conflicts, unresolved configs) added to the message.
//
// AllowedConfigs (trusted.go) is, for one MCA, the configurations the hub allows it to run with,
// from what agents cannot write (the CMA and its status, the placements' decisions, the MCA's
// spec): the desired ones and, during a rollout, the serving placement's lastAppliedConfig and
// lastKnownGoodConfig. Agents may write their MCA's status, so whoever acts on a configuration
// named in status.configReferences (internal/hub/addontemplate) checks it there first.
//
// ProgressingReconciler works per MCA: OCM's addon progressing controller. From the add-on's
// ManifestWorks (label addon.open-cluster-management.io/addon-name, configurations in annotation
// work.open-cluster-management.io/manifest-config-spec-hash) it sets the Progressing condition
// (ConfigurationUnsupported, WaitingForManifestApplied, Progressing, Completed) and, once every
// work is Applied and Available with the desired configurations, lastAppliedConfig: that is what
// moves the rollout on.
//
// FeatureLabelReconciler works per ManagedCluster: OCM's add-on feature discovery. Each add-on of
// a cluster puts the label feature.open-cluster-management.io/addon-<add-on> on the cluster:
// available while its Available condition is True, unhealthy while False, unreachable while
// Unknown or unreported; the label goes when the add-on is deleted. Placements written for OCM
// select clusters by it. As in OCM, a cluster being deleted or not yet reported by its agent is
// left alone. The hub writes these labels with merge patches that carry them alone; agents have
// no reason to write them (the admission webhook is where their label writes are refused).
//
// Status is written only when it changes, conditions with ObservedGeneration.
package addon
