// Package rbac embeds the hub's roles that `make generate` writes (role.yaml, controller-gen)
// from the +kubebuilder:rbac markers on the hub's controllers in internal/hub: the ClusterRole
// flotilla-hub, everything the hub does cluster-wide; the Role flotilla-hub, its leader
// election Lease and events in open-cluster-management-hub; and the Role flotilla-hub in
// flower-system, the SuperLink of the built-in add-on flower-addon (its Secrets, ConfigMaps,
// Services and Deployment there only). Bound to these and nothing else, the
// hub does its job (test/webhook runs it so); README.md says what each rule is for.
//
// Do not edit role.yaml by hand: change the markers and run `make generate`.
package rbac
