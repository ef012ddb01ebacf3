// Package charts holds Flotilla's Helm charts, flotilla-hub and flotilla-agent, embedded so that
// `flotilla init` and `flotilla join` install the same objects `helm install` does, and renders
// them with Helm's own engine (helm.sh/helm/v4).
//
// The charts' generated parts (crds/ and files/*-rules.yaml) come from config/crd and
// config/rbac through `make generate` (hack/chartgen): the hub's chart grants exactly the roles
// derived from the hub's +kubebuilder:rbac markers. The integration test in test/install runs the
// binaries as the rendered Deployments would, with the charts' ServiceAccounts, to prove the
// roles are enough.
package charts
