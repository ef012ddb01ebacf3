package kueue

import (
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// resources are the Kueue resources the hub's Kueue controllers (and internal/hub/fleetqueue) read and write.
var resources = []string{"admissionchecks", "multikueueconfigs", "multikueueclusters", "workloads", "resourceflavors", "cohorts", "clusterqueues", "localqueues"}

// Served says whether the API server serves the Kueue resources the controller needs
// (kueue.x-k8s.io/v1beta2), that is whether Kueue's CRDs are installed, and if not, what is missing.
func Served(d discovery.DiscoveryInterface) (ok bool, missing string, err error) {
	gv := kueuev1beta2.GroupVersion.String()
	l, err := d.ServerResourcesForGroupVersion(gv)
	if apierrors.IsNotFound(err) {
		return false, gv + " is not served (Kueue's CRDs are not installed)", nil
	}
	if err != nil {
		return false, "", fmt.Errorf("discovering %s: %w", gv, err)
	}
	var have []string
	for _, r := range l.APIResources {
		have = append(have, r.Name)
	}
	for _, r := range resources {
		if !slices.Contains(have, r) {
			return false, fmt.Sprintf("%s does not serve %s", gv, r), nil
		}
	}
	return true, "", nil
}
