// Package fleetqueue is the hub's controller of FleetQueues (queue.flotilla.io/v1alpha1): one
// queue for the whole fleet, shared by teams by weight, whose quotas follow the fleet.
//
// For a FleetQueue F naming the MultiKueue AdmissionCheck C, the hub writes and keeps current:
//
//   - a ResourceFlavor per GPU model the workers of C have, F- and the name the kueue-queues
//     add-on gives the workers' flavor (internal/contract/gpuflavor: F-gpu-nvidia-h100-80gb-hbm3), with
//     nodeLabels {nvidia.com/gpu.product: model}; and F-cpu-only;
//   - the Cohort F holding the fleet's quota: per model flavor, the allocatable GPUs of that
//     model over C's workers less what teams are guaranteed; cpu and memory, the workers' total
//     (each flavor: the hub's gate is the GPUs, Kueue on the worker checks cpu and memory exactly);
//   - per worker W of C's config, a ManifestWork fleetqueue-F in W's namespace that creates each
//     team's namespace and LocalQueue on W, where MultiKueue puts the team's jobs
//     (WorkerQueues: create only what is missing, never change or take what W has);
//   - per team T a ClusterQueue F-T in the cohort, with T's fair-sharing weight, nominal quota
//     T's guaranteed GPUs (0 otherwise, so it borrows the rest from the cohort), preemption to
//     reclaim within the cohort, and C as its admission check; and a LocalQueue in T's namespace.
//
// The workers are the clusters of C's MultiKueueConfig (internal/hub/kueue keeps it to the
// placement's decisions, without clusters declared lost) whose ResourceUsage is usable now. A
// worker joining, leaving, declared lost, or its figures changing or expiring changes the
// quotas within seconds. So the hub's Kueue never admits more GPUs of a model than the workers
// have; where they go is the dispatcher's choice (gang fit, internal/hub/kueue).
//
// Ownership: what the controller writes carries the label FleetQueueLabel=F and an owner
// reference to F, so that deleting F deletes them (each FleetQueue has its own flavors). An
// object of a needed name without that label, or labeled for another FleetQueue, is someone
// else's: it is left alone and named in the Ready condition, so a team's own ClusterQueues are
// never touched, and names built from two FleetQueues' and teams' names that meet (a-b + c,
// a + b-c) cannot take each other's objects.
//
// Bad specs: a weight not above 0 or two teams sharing a LocalQueue refuse the whole spec
// (Ready=False, Invalid, nothing changed). Guarantees of a model no worker has, or above what the
// workers have, are reported the same way, and the quotas are written with the guarantees
// scaled down to what there is: the hub must still never promise more than the fleet holds,
// including after a worker is lost.
package fleetqueue
