// Package crd embeds the CustomResourceDefinitions that `make generate` writes from the types in
// api/ (controller-gen), so that the flotilla binary installs exactly the CRDs it was built with.
// Do not edit the YAML files by hand: change the types and run `make generate`.
package crd
