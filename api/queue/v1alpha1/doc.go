// Package v1alpha1 is queue.flotilla.io/v1alpha1, Flotilla's own API for one queue over the whole
// fleet: a FleetQueue names the hub's MultiKueue AdmissionCheck and the teams that share the
// fleet's accelerators, with fair-sharing weights and optional guaranteed GPUs per model. The
// hub (internal/hub/fleetqueue) turns it into Kueue objects on the hub and keeps their quotas
// equal to what the check's workers hold, per GPU model, from the workers' ResourceUsages.
//
// A CRD rather than a `flotilla queue` command: the quotas must follow the fleet (a worker
// joining, leaving or declared lost), so something on the hub keeps them current anyway, and a
// FleetQueue's status is where that work is reported. It is the short description a platform
// team writes; Kueue's own objects stay Kueue's, and the hub writes only objects it labels.
//
// +kubebuilder:object:generate=true
// +groupName=queue.flotilla.io
package v1alpha1
