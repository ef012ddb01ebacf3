// Package federatedlearning is the hub's FederatedLearning controller
// (federation-ai.open-cluster-management.io/v1alpha1), as OCM's addon-contrib controller runs it,
// with what that controller leaves out: conditions, per-client state, training progress, a
// timeline, and clean-up.
//
// For each FederatedLearning the Reconciler keeps, as OCM's does:
//
//   - a Placement named after it, from spec.client.placement, and a ManagedClusterSetBinding for
//     each set it names (both owned by it, so they go with it; OCM's bindings leak);
//   - for framework flower: the Deployment <name>-serverapp on the hub (the ServerApp), and the
//     ManifestWorkReplicaSet <name>-clientapp over the placement, whose Deployment
//     <name>-clientapp runs the ClientApp beside a SuperNode on each cluster. A federation that
//     names flower-addon's SuperLink (the default) gets, unlike OCM's, a SuperLink of its own and
//     SuperNodes of its own, since Flower isolates no tenants on a shared one (superlink.go): a
//     NodePort Service <name>-superlink, a Deployment <name>-superlink (the SuperLink on its pod's
//     loopback, and the front, `flotilla flower-front`, on the pod's address), the keys in the
//     hub's record in flower-system and a copy for the pods, and per client cluster its SuperNode
//     with a key the hub registers. Flotilla adds to the Placement the requirement that flower-addon is available
//     on the cluster (label feature.open-cluster-management.io/addon-flower-addon=available), so
//     a client is never sent where no SuperNode runs;
//   - for openfl and other: the PersistentVolumeClaim of spec.server.storage, the Service
//     <name>-server for listeners[0], the Job <name>-server on the hub, and per decided cluster a
//     ManifestWork <name> with the client Job <name>-client. ManifestWorks of clusters no longer
//     decided are removed (OCM's are left behind).
//
// Data stays where it is. Each client is told the data path that its own cluster's claim names
// (the claim of the last Exists claim selector): OpenFL clients as --data-path, Flower clients as
// FLOTILLA_DATA_PATH from a ConfigMap the hub delivers to that cluster only. The hub's webhook
// lets no one but a cluster's own agent change its status.clusterClaims, so a claim the
// placement selects by was reported by the cluster itself.
//
// Phases and messages are OCM's (Waiting, Running, Completed, Failed); a spec the controller
// cannot carry out is Failed with the field and the fix, and is tried again when the spec
// changes. Unlike OCM's controller, a transient error never fails a federation, and a Flower
// federation completes when its ServerApp reports the last round.
//
// Progress: for Flower the controller reads the federation's run through the SuperLink's Control
// API (FlowerRuns, internal/hub/flowerctl; through the front, with the hub's token, for the
// federation's own SuperLink): the first run after the FederatedLearning's creation whose run
// config names its UID (RunConfigKey), recorded in status.flowerRunID and followed alone from
// then on. Of that run it reads the
// status, and the ServerApp's log, which only the SuperLink
// keeps, where it takes Flower's "[ROUND r/R]" lines and the FLOTILLA_PROGRESS JSON lines an app
// may print (progress.go). OpenFL reports no progress; its server Job's end completes it. The hub
// reads no pod or log: its role has no business with pods.
package federatedlearning
