package describe

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/cli/printing"
)

// writeWork prints mw for a reader; see the package doc for the layout.
func writeWork(w io.Writer, mw *workv1.ManifestWork, clk clock.PassiveClock) error {
	p := &printer{w: w}
	p.field("Name:", mw.Name)
	p.field("Cluster:", mw.Namespace)
	p.field("Age:", printing.Age(mw.CreationTimestamp, clk))
	if mw.DeletionTimestamp != nil {
		p.field("Deleting:", "for "+printing.Age(*mw.DeletionTimestamp, clk)+": the cluster's agent removes what the work applied, per its delete option")
	}
	if set := printing.WorkReplicaSet(mw.Labels); set != "" {
		p.field("Made by:", "ManifestWorkReplicaSet "+set)
	}
	if d := mw.Spec.DeleteOption; d != nil {
		p.field("Delete option:", deleteOption(d))
	}
	if e := mw.Spec.Executor; e != nil {
		p.field("Executor:", executor(e))
	}
	if len(mw.Status.Conditions) == 0 {
		p.field("Conditions:", "none: the cluster's work agent has not reported on this work yet")
	} else {
		p.line("Conditions:")
		p.conditions("  ", mw.Status.Conditions, clk)
	}
	p.field("Manifests:", strconv.Itoa(len(mw.Spec.Workload.Manifests)))
	reported := make(map[int32]*workv1.ManifestCondition, len(mw.Status.ResourceStatus.Manifests))
	for i := range mw.Status.ResourceStatus.Manifests {
		m := &mw.Status.ResourceStatus.Manifests[i]
		reported[m.ResourceMeta.Ordinal] = m
	}
	for i, m := range mw.Spec.Workload.Manifests {
		status := reported[int32(i)]
		delete(reported, int32(i))
		p.manifest(i, identify(m, status), status, clk)
	}
	// Statuses of manifests the work no longer has: the agent has not caught up with an edit.
	stale := make([]int32, 0, len(reported))
	for ordinal := range reported {
		stale = append(stale, ordinal)
	}
	slices.Sort(stale)
	for _, ordinal := range stale {
		status := reported[ordinal]
		p.manifest(int(ordinal), fromMeta(status.ResourceMeta)+" (no longer in spec.workload: the agent has not caught up with an edit)", status, clk)
	}
	return p.err
}

// printer writes lines and keeps the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) line(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format+"\n", args...)
	}
}

// field writes a "Label:  value" line, the values aligned.
func (p *printer) field(label, value string) { p.line("%-16s%s", label, value) }

// conditions writes a table of conditions, indented.
func (p *printer) conditions(indent string, conditions []metav1.Condition, clk clock.PassiveClock) {
	t := printing.NewIndentedTable(p.w, indent, "TYPE", "STATUS", "REASON", "MESSAGE", "AGE")
	for _, c := range conditions {
		t.Row(c.Type, string(c.Status), printing.OrDash(c.Reason), printing.OrDash(oneLine(c.Message)), printing.Age(c.LastTransitionTime, clk))
	}
	if err := t.Flush(); err != nil && p.err == nil {
		p.err = err
	}
}

// manifest writes one manifest: its identity, then what the agent reported for it.
func (p *printer) manifest(ordinal int, identity string, status *workv1.ManifestCondition, clk clock.PassiveClock) {
	p.line("  %d: %s", ordinal, identity)
	if status == nil {
		p.line("    Not reported by the cluster's work agent yet.")
		return
	}
	if len(status.Conditions) == 0 {
		p.line("    Conditions: none")
	} else {
		p.line("    Conditions:")
		p.conditions("      ", ordered(status.Conditions), clk)
	}
	if values := status.StatusFeedbacks.Values; len(values) > 0 {
		p.line("    Status feedback:")
		for _, v := range values {
			p.line("      %s = %s (%s)", v.Name, fieldValue(v.Value), v.Value.Type)
		}
	}
}

// ordered puts a manifest's conditions in the order a reader checks them: Applied, Available,
// StatusFeedbackSynced, then the others (Progressing, Degraded, Complete and those of condition
// rules) as the agent wrote them.
func ordered(conditions []metav1.Condition) []metav1.Condition {
	first := []string{workv1.ManifestApplied, workv1.ManifestAvailable, workv1.ManifestStatusFeedbackSynced}
	rank := func(c metav1.Condition) int {
		if i := slices.Index(first, c.Type); i >= 0 {
			return i
		}
		return len(first)
	}
	out := slices.Clone(conditions)
	slices.SortStableFunc(out, func(a, b metav1.Condition) int { return rank(a) - rank(b) })
	return out
}

// fieldValue is a feedback value as text: strings quoted (so an empty one shows), JSON as given.
func fieldValue(v workv1.FieldValue) string {
	switch {
	case v.Type == workv1.Integer && v.Integer != nil:
		return strconv.FormatInt(*v.Integer, 10)
	case v.Type == workv1.String && v.String != nil:
		return strconv.Quote(*v.String)
	case v.Type == workv1.Boolean && v.Boolean != nil:
		return strconv.FormatBool(*v.Boolean)
	case v.Type == workv1.JSONRaw && v.JSONRaw != nil:
		return *v.JSONRaw
	default:
		return "<none>"
	}
}

// identify names a manifest as KIND NAMESPACE/NAME (APIVERSION), from the manifest itself, else
// from what the agent reported when the manifest cannot be read.
func identify(m workv1.Manifest, status *workv1.ManifestCondition) string {
	var obj struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"metadata"`
	}
	raw := m.Raw
	if raw == nil && m.Object != nil {
		raw, _ = json.Marshal(m.Object)
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj.Kind == "" {
		if status != nil {
			return fromMeta(status.ResourceMeta)
		}
		return "(not a Kubernetes object)"
	}
	return describeObject(obj.Kind, obj.Metadata.Namespace, obj.Metadata.Name, obj.APIVersion)
}

func fromMeta(m workv1.ManifestResourceMeta) string {
	apiVersion := m.Version
	if m.Group != "" {
		apiVersion = m.Group + "/" + m.Version
	}
	return describeObject(m.Kind, m.Namespace, m.Name, apiVersion)
}

func describeObject(kind, namespace, name, apiVersion string) string {
	if namespace != "" {
		name = namespace + "/" + name
	}
	return fmt.Sprintf("%s %s (%s)", kind, name, apiVersion)
}

// deleteOption is "Orphan", "SelectivelyOrphan, orphaning apps/deployments ml/web",
// "Foreground, deleted 600s after Complete".
func deleteOption(d *workv1.DeleteOption) string {
	policy := string(d.PropagationPolicy)
	if policy == "" {
		policy = string(workv1.DeletePropagationPolicyTypeForeground)
	}
	parts := []string{policy}
	if d.SelectivelyOrphans != nil && len(d.SelectivelyOrphans.OrphaningRules) > 0 {
		rules := make([]string, len(d.SelectivelyOrphans.OrphaningRules))
		for i, r := range d.SelectivelyOrphans.OrphaningRules {
			resource := r.Resource
			if r.Group != "" {
				resource = r.Group + "/" + r.Resource
			}
			name := r.Name
			if r.Namespace != "" {
				name = r.Namespace + "/" + r.Name
			}
			rules[i] = resource + " " + name
		}
		parts = append(parts, "orphaning "+strings.Join(rules, ", "))
	}
	if ttl := d.TTLSecondsAfterFinished; ttl != nil {
		parts = append(parts, fmt.Sprintf("deleted %ds after Complete (ttlSecondsAfterFinished)", *ttl))
	}
	return strings.Join(parts, ", ")
}

// executor is "ServiceAccount NAMESPACE/NAME".
func executor(e *workv1.ManifestWorkExecutor) string {
	s := e.Subject
	switch {
	case s == nil:
		return "the agent's own identity (no subject)"
	case s.Type == workv1.ExecutorSubjectTypeServiceAccount && s.ServiceAccount != nil:
		return fmt.Sprintf("ServiceAccount %s/%s", s.ServiceAccount.Namespace, s.ServiceAccount.Name)
	default:
		return string(s.Type)
	}
}

// oneLine keeps a message on one table row.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
