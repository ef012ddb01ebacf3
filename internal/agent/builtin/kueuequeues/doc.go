// Package kueuequeues is the built-in add-on kueue-queues: on a cluster whose ManagedClusterAddOn
// kueue-queues exists, the agent keeps Kueue's configuration (kueue.x-k8s.io/v1beta2) on the
// cluster current from the cluster's own nodes. It is built into `flotilla agent` rather than an
// AddOnTemplate because a template cannot say "one ResourceFlavor per GPU model found", and no
// add-on image runs in local fleets.
//
// What it writes (Compute, a function of the nodes alone):
//   - a ResourceFlavor per GPU model, the value of a node's nvidia.com/gpu.product label, named
//     "gpu-" and the model lowercased with every run of other characters than a-z and 0-9 made one
//     "-" (gpu-nvidia-h100-80gb-hbm3), with nodeLabels {nvidia.com/gpu.product: <model>}. Models
//     that would share a name (NVIDIA_T4, nvidia.t4), and names over 63 characters, end in "-" and
//     8 hex digits of the model's SHA-256 instead. Such a name changes when a second model of the
//     same name appears (the flavor is then replaced).
//   - the ResourceFlavor cpu-only, for the nodes without a model label, with no nodeLabels:
//     Kueue's nodeLabels match by equality only, so "has no GPU" cannot be said, and nodes without
//     GPUs share no label in general (GPU feature discovery labels only GPU nodes). Its quota
//     counts those nodes, but the pods it admits are not kept off GPU nodes. A node with GPUs but
//     no model label counts here, without its GPUs: no flavor could steer a job to them.
//   - the ClusterQueue cluster-queue (the name of OCM's examples, so their manifests work), for
//     all namespaces, with one resource group covering cpu, memory and nvidia.com/gpu whose
//     flavors are cpu-only, then the GPU models by flavor name. Each quota is the sum of the
//     allocatable of the flavor's nodes: every node counts, Ready or not, cordoned or not (a
//     quota, not a promise of free space). cpu-only's GPU quota is 0. Kueue admits a job to the
//     first flavor with room: a job asking no GPUs is charged to cpu-only while it has room, and
//     a GPU job passes over it. Kueue allows 64
//     flavors in a group: past 63 models, the last by name are left out and logged.
//   - the LocalQueue default/user-queue pointing at cluster-queue (MultiKueue needs a worker's
//     LocalQueue to have the namespace and name of the manager's).
//
// A reflector watches Nodes only; its store keeps of each node its model label and allocatable
// cpu, memory and GPUs, and wakes the add-on only when those change (not on kubelets'
// heartbeats). The objects are computed a Debounce (1 s) after a change, all the changes of that
// second together, and written only when they differ from what was last written; every Resync
// (5 min) they are read and put right even so. A write sends only what differs from the object
// read (the add-on sets nodeLabels, namespaceSelector and resourceGroups; Kueue's defaults of the
// other fields stay).
//
// Ownership: everything it writes carries the label addon.flotilla.io/built-in=kueue-queues. An
// object of one of its names without the label is someone else's: the add-on neither changes nor
// deletes it, writes the others, and ends its run with an error naming each such object and the
// fix, which the agent shows in the ManagedClusterAddOn's Available condition (and runs the
// add-on again after its backoff). Switched off, it deletes only labeled objects; Kueue's
// finalizers keep a queue or flavor until nothing uses it.
//
// Without Kueue's API on the cluster the run ends with "install Kueue on <cluster> (flotilla dev
// up --with kueue for local fleets)" and the agent tries again after its backoff. The add-on
// acts with the agent's spoke identity, which needs list/watch on Nodes and write access to
// ResourceFlavors, ClusterQueues and LocalQueues; on the hub it writes nothing (the agent
// reports its health), so the agent's hub permissions do not grow.
package kueuequeues
