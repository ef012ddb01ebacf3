// Package flowerfleet trains a model for real in a local fleet: the hub and four spokes, each
// with a process-runtime node, run what Flotilla renders as local processes (Flower from PyPI,
// hack/flwr; Flotilla's image is the flotilla binary built for the tests): each FederatedLearning's
// own SuperLink and front and its ServerApp on the hub, its SuperNodes and ClientApps on the
// spokes that hold data, and the example app (examples/federated-learning) trains over them.
// `make demo-fl` runs TestFederationTrains and prints what it sees; TestTenantsAreIsolated plays
// one tenant's federation against another's.
package flowerfleet
