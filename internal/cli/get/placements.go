package get

import (
	"io"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/cli/printing"
)

// printPlacements writes [NAMESPACE] NAME SELECTED GROUPS SATISFIED MISCONFIGURED REASON AGE.
// GROUPS lists each decision group as index, name when it has one, and its cluster count:
// "0 canary:1, 1:4". REASON is the reason of the condition that explains the placement's state:
// PlacementMisconfigured's when it is True, else PlacementSatisfied's.
func printPlacements(w io.Writer, list *clusterv1beta1.PlacementList, clk clock.PassiveClock, allNamespaces bool) error {
	header := []string{"NAME", "SELECTED", "GROUPS", "SATISFIED", "MISCONFIGURED", "REASON", "AGE"}
	if allNamespaces {
		header = append([]string{"NAMESPACE"}, header...)
	}
	t := printing.NewTable(w, header...)
	for i := range list.Items {
		p := &list.Items[i]
		cells := []string{p.Name,
			strconv.Itoa(int(p.Status.NumberOfSelectedClusters)),
			decisionGroups(p.Status.DecisionGroups),
			printing.ConditionStatus(p.Status.Conditions, clusterv1beta1.PlacementConditionSatisfied),
			printing.ConditionStatus(p.Status.Conditions, clusterv1beta1.PlacementConditionMisconfigured),
			placementReason(p.Status.Conditions),
			printing.Age(p.CreationTimestamp, clk)}
		if allNamespaces {
			cells = append([]string{p.Namespace}, cells...)
		}
		t.Row(cells...)
	}
	return t.Flush()
}

func decisionGroups(groups []clusterv1beta1.DecisionGroupStatus) string {
	if len(groups) == 0 {
		return "-"
	}
	parts := make([]string, len(groups))
	for i, g := range groups {
		s := strconv.Itoa(int(g.DecisionGroupIndex))
		if g.DecisionGroupName != "" {
			s += " " + g.DecisionGroupName
		}
		parts[i] = s + ":" + strconv.Itoa(int(g.ClusterCount))
	}
	return strings.Join(parts, ", ")
}

func placementReason(conditions []metav1.Condition) string {
	if c := meta.FindStatusCondition(conditions, clusterv1beta1.PlacementConditionMisconfigured); c != nil && c.Status == metav1.ConditionTrue {
		return c.Reason
	}
	if c := meta.FindStatusCondition(conditions, clusterv1beta1.PlacementConditionSatisfied); c != nil {
		return c.Reason
	}
	return "-"
}
