// Package addontest holds what the tests of the controllers that write a ManagedClusterAddOn's
// status share: a fake client's interceptor that makes another writer's change land between a
// controller's read and its first status write, so that write conflicts.
package addontest
