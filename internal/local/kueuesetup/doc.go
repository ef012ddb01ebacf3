// Package kueuesetup makes the hub's side of a MultiKueue set-up as a user writes it for OCM's
// Kueue integration: the MultiKueue AdmissionCheck naming the placement's MultiKueueConfig, OCM's
// placement AdmissionCheck, a flavor, the ClusterQueue whose admission check is MultiKueue's, and
// its LocalQueue, named as the workers' (the built-in add-on kueue-queues). Tests and benchmarks
// build their set-ups with it; examples/kueue holds the same objects as YAML.
package kueuesetup
