package printing

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/flotilla/flotilla/internal/hub/fleetview"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/utils/clock"
)

// ConditionStatus is the status of the condition of type typ, "Unknown" when there is none: a
// condition nobody has set yet says as little as one set to Unknown.
func ConditionStatus(conditions []metav1.Condition, typ string) string {
	if c := meta.FindStatusCondition(conditions, typ); c != nil {
		return string(c.Status)
	}
	return string(metav1.ConditionUnknown)
}

// Age is how long ago t was, as kubectl's AGE column prints it (5s, 3m, 2d4h).
func Age(t metav1.Time, clk clock.PassiveClock) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(clk.Since(t.Time))
}

// Table writes aligned columns as kubectl does.
type Table struct {
	tw     *tabwriter.Writer
	indent string
}

// NewTable returns a table writing to w whose first row is header.
func NewTable(w io.Writer, header ...string) *Table {
	return NewIndentedTable(w, "", header...)
}

// NewIndentedTable is NewTable with every row prefixed by indent, for a table nested under a
// heading (as kubectl describe nests conditions).
func NewIndentedTable(w io.Writer, indent string, header ...string) *Table {
	t := &Table{tw: tabwriter.NewWriter(w, 6, 4, 3, ' ', 0), indent: indent}
	t.Row(header...)
	return t
}

// Row writes one row.
func (t *Table) Row(cells ...string) {
	// tabwriter keeps the first write error and Flush returns it.
	_, _ = fmt.Fprintln(t.tw, t.indent+strings.Join(cells, "\t"))
}

// Flush writes the aligned rows; it returns the first write error.
func (t *Table) Flush() error { return t.tw.Flush() }

// OrDash is s, or "-" for an empty cell, as kubectl prints one.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WorkReplicaSet names the ManifestWorkReplicaSet that made a ManifestWork, as NAMESPACE/NAME;
// "" when the work has no such label (internal/hub/fleetview.WorkReplicaSet).
func WorkReplicaSet(labels map[string]string) string { return fleetview.WorkReplicaSet(labels) }
