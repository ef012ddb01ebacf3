// Package dev is `flotilla dev`: a local fleet of real Kubernetes control planes (a hub and the
// spokes of a fleet file, with simulated GPU nodes) for trying Flotilla, demos and tests.
package dev
