package get

import (
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/cli/printing"
)

// printAddOns writes [NAMESPACE] NAME AVAILABLE DEGRADED PROGRESSING INSTALLED-BY AGE for
// ManagedClusterAddOns, whose namespace is their cluster's. AVAILABLE is Unknown until the add-on
// or the cluster's agent reports it; DEGRADED and PROGRESSING are "-" when no controller set them.
// INSTALLED-BY is the ClusterManagementAddOn whose install strategy made the add-on, or "user"
// when someone created it (`flotilla addon enable`, or kubectl).
func printAddOns(w io.Writer, list *addonv1alpha1.ManagedClusterAddOnList, clk clock.PassiveClock, allNamespaces bool) error {
	header := []string{"NAME", "AVAILABLE", "DEGRADED", "PROGRESSING", "INSTALLED-BY", "AGE"}
	if allNamespaces {
		header = append([]string{"NAMESPACE"}, header...)
	}
	t := printing.NewTable(w, header...)
	for i := range list.Items {
		a := &list.Items[i]
		cells := []string{a.Name,
			printing.ConditionStatus(a.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable),
			optionalConditionStatus(a.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionDegraded),
			optionalConditionStatus(a.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing),
			installedBy(a),
			printing.Age(a.CreationTimestamp, clk)}
		if allNamespaces {
			cells = append([]string{a.Namespace}, cells...)
		}
		t.Row(cells...)
	}
	return t.Flush()
}

// installedBy names the ClusterManagementAddOn that controls the add-on, "user" when none does.
func installedBy(a *addonv1alpha1.ManagedClusterAddOn) string {
	if ref := metav1.GetControllerOf(a); ref != nil && ref.Kind == "ClusterManagementAddOn" {
		return "ClusterManagementAddOn/" + ref.Name
	}
	return "user"
}
