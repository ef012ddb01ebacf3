package get

import (
	"io"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/cli/printing"
)

// printWorks writes [NAMESPACE] NAME MANIFESTS APPLIED AVAILABLE COMPLETE REPLICASET AGE. A
// work's namespace is its cluster's. APPLIED and AVAILABLE are Unknown until the cluster's agent
// reports them; COMPLETE is "-" unless a condition rule of the work sets it, since only such rules
// can complete a work. REPLICASET is the ManifestWorkReplicaSet that made the work, as
// NAMESPACE/NAME.
func printWorks(w io.Writer, list *workv1.ManifestWorkList, clk clock.PassiveClock, allNamespaces bool) error {
	header := []string{"NAME", "MANIFESTS", "APPLIED", "AVAILABLE", "COMPLETE", "REPLICASET", "AGE"}
	if allNamespaces {
		header = append([]string{"NAMESPACE"}, header...)
	}
	t := printing.NewTable(w, header...)
	for i := range list.Items {
		mw := &list.Items[i]
		cells := []string{mw.Name,
			strconv.Itoa(len(mw.Spec.Workload.Manifests)),
			printing.ConditionStatus(mw.Status.Conditions, workv1.WorkApplied),
			printing.ConditionStatus(mw.Status.Conditions, workv1.WorkAvailable),
			optionalConditionStatus(mw.Status.Conditions, workv1.WorkComplete),
			printing.OrDash(printing.WorkReplicaSet(mw.Labels)),
			printing.Age(mw.CreationTimestamp, clk)}
		if allNamespaces {
			cells = append([]string{mw.Namespace}, cells...)
		}
		t.Row(cells...)
	}
	return t.Flush()
}

// optionalConditionStatus is the status of a condition that only some objects ever have: "-"
// when it is absent.
func optionalConditionStatus(conditions []metav1.Condition, typ string) string {
	if c := meta.FindStatusCondition(conditions, typ); c != nil {
		return string(c.Status)
	}
	return "-"
}
