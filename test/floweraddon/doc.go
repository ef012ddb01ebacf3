// Package floweraddon tests the built-in add-on flower-addon (internal/hub/flower) with the hub,
// real API servers and two spokes joined by running registration and work agents: enabling it on
// a cluster delivers the SuperNode and the CA certificate (never a key) through the add-on's
// ManifestWork, the hub keeps the SuperLink and its certificates in flower-system, objects of the
// same names that are not Flotilla's are left alone and reported, a bad variable is refused
// with the field and the fix, and disabling it removes the work and, last, the SuperLink.
package floweraddon
