// Package ocmplacement pins OCM's placement controller (open-cluster-management.io/ocm's
// cmd/placement), the peer of Flotilla's placement scheduler in `make bench-placement`, in a
// nested module so that its dependencies stay out of Flotilla's. tools/build-ocm-placement.sh
// builds it from this pin, unchanged.
package ocmplacement

import _ "open-cluster-management.io/ocm/pkg/cmd/hub" // the pin: cmd/placement's one import from OCM
