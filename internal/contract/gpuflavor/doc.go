// Package gpuflavor names Kueue ResourceFlavors after GPU models, one way for every part of
// Flotilla: the built-in add-on kueue-queues on workers (internal/agent/builtin/kueuequeues) and
// the hub's fleet queues (internal/hub/fleetqueue) name a model's flavor alike, and two models
// never share a flavor name.
package gpuflavor
