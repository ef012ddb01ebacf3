// Package printing holds what the CLI's read commands (`flotilla get`, `flotilla describe`) print
// alike: kubectl-style aligned columns, an object's age as kubectl's AGE column spells it, and a
// condition's status. Every function takes its clock, so tests print at a fixed time.
package printing
