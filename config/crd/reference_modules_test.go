package crd

// The modules that publish the reference CRDs, beside their Go types. Importing one package of
// each keeps the module (at the version in go.mod) required and in the module cache, so that the
// compatibility test finds the CRD files with `go list -m` and no network.
import (
	_ "open-cluster-management.io/api/cluster/v1"
	_ "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)
