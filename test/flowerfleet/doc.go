// Package flowerfleet trains a model for real in a local fleet: the hub and four spokes, each
// with a process-runtime node, run what Flotilla renders as local processes: flower-addon's
// SuperLink on the hub and a SuperNode per spoke (Flower from PyPI, hack/flwr), the
// FederatedLearning's ServerApp on the hub and ClientApps on the spokes that hold data, and the
// example app (examples/federated-learning) trains over them. `make demo-fl` runs it and prints
// what it sees.
package flowerfleet
