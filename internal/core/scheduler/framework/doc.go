// Package framework holds the scheduler's extension points: one small interface per point
// (Filter, Score, the optional NormalizeScore), the Status a plugin returns, the Handle through
// which a plugin reads the snapshot, and the Registry that maps a plugin name to its factory.
// The core in package scheduler only ever talks to these interfaces, so adding a plugin means
// writing a package under plugins/ and adding one line to the registry.
package framework
