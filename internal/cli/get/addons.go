package get

import (
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/cli/printing"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
)

// printAddOns writes [NAMESPACE] NAME AVAILABLE DEGRADED PROGRESSING INSTALLED-BY AGE for
// ManagedClusterAddOns, whose namespace is their cluster's. AVAILABLE is Unknown until the add-on
// or the cluster's agent reports it; DEGRADED and PROGRESSING are "-" when no controller set them.
// INSTALLED-BY is the ClusterManagementAddOn whose install strategy made the add-on, or "user"
// when someone created it (`flotilla addon enable`, or kubectl). Under the table, a warning for
// each add-on that says another writer writes its score (ScoreConflict=True, on the built-in
// resource-usage when OCM's resource-usage-collect is enabled too), with its message.
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
	if err := t.Flush(); err != nil {
		return err
	}
	for i := range list.Items {
		a := &list.Items[i]
		if c := meta.FindStatusCondition(a.Status.Conditions, builtinaddon.ScoreConflictCondition); c != nil && c.Status == metav1.ConditionTrue {
			if _, err := fmt.Fprintf(w, "Warning: add-on %s on cluster %s: %s (%s): %s\n", a.Name, a.Namespace, c.Type, c.Reason, c.Message); err != nil {
				return err
			}
		}
	}
	return nil
}

// installedBy names the ClusterManagementAddOn that controls the add-on, "user" when none does.
func installedBy(a *addonv1alpha1.ManagedClusterAddOn) string {
	if ref := metav1.GetControllerOf(a); ref != nil && ref.Kind == "ClusterManagementAddOn" {
		return "ClusterManagementAddOn/" + ref.Name
	}
	return "user"
}
