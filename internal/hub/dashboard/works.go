package dashboard

import (
	"fmt"
	"net/http"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla/flotilla/api/work/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/fleetview"
)

// WorkRow is one ManifestWork: its status on its cluster (internal/hub/fleetview's) and the status
// feedback its agent reports, as "KIND NAME: field=value".
type WorkRow struct {
	fleetview.Work
	Feedback []string `json:"feedback"`
}

// listOptions are the options of a page of q in q's namespace, and the words for it.
func listOptions(q query) ([]client.ListOption, string) {
	opts := []client.ListOption{client.Limit(q.Limit), client.Continue(q.Continue)}
	if q.Namespace == "" {
		return opts, "in every namespace"
	}
	return append(opts, client.InNamespace(q.Namespace)), "in namespace " + q.Namespace
}

// works is a page of ManifestWorks, by cluster (namespace) and name.
func (s *Server) works(w http.ResponseWriter, r *http.Request) {
	q, c, ok := s.begin(w, r, "limit", "continue", "namespace")
	if !ok {
		return
	}
	opts, where := listOptions(q)
	var list workv1.ManifestWorkList
	if err := c.List(ctx(r), &list, opts...); err != nil {
		writeError(w, hubError(err, "listing manifestworks "+where))
		return
	}
	report := fleetview.WorkReport(list.Items)
	feedback := map[string][]string{}
	for i := range list.Items {
		feedback[list.Items[i].Namespace+"/"+list.Items[i].Name] = feedbackOf(&list.Items[i])
	}
	rows := make([]WorkRow, 0, len(report.Works))
	for _, wk := range report.Works {
		rows = append(rows, WorkRow{Work: wk, Feedback: feedback[wk.Cluster+"/"+wk.Name]})
	}
	listAnswer(w, Page[WorkRow]{Items: rows, Continue: list.Continue, Remaining: list.RemainingItemCount}, nil)
}

func feedbackOf(mw *workv1.ManifestWork) []string {
	out := []string{}
	for _, m := range mw.Status.ResourceStatus.Manifests {
		for _, v := range m.StatusFeedbacks.Values {
			out = append(out, fmt.Sprintf("%s %s: %s=%s", m.ResourceMeta.Kind, m.ResourceMeta.Name, v.Name, fieldValue(v.Value)))
		}
	}
	return out
}

func fieldValue(v workv1.FieldValue) string {
	switch {
	case v.Integer != nil:
		return strconv.FormatInt(*v.Integer, 10)
	case v.String != nil:
		return *v.String
	case v.Boolean != nil:
		return strconv.FormatBool(*v.Boolean)
	case v.JSONRaw != nil:
		return *v.JSONRaw
	}
	return ""
}

// WorkReplicaSetRow is a ManifestWorkReplicaSet's progress: its placements and how many of its
// works are applied and available.
type WorkReplicaSetRow struct {
	Namespace  string                                     `json:"namespace"`
	Name       string                                     `json:"name"`
	Placements []workv1alpha1.PlacementSummary            `json:"placements"`
	Summary    workv1alpha1.ManifestWorkReplicaSetSummary `json:"summary"`
	Conditions []fleetview.Condition                      `json:"conditions"`
}

func (s *Server) workReplicaSets(w http.ResponseWriter, r *http.Request) {
	q, c, ok := s.begin(w, r, "limit", "continue", "namespace")
	if !ok {
		return
	}
	opts, where := listOptions(q)
	var list workv1alpha1.ManifestWorkReplicaSetList
	if err := c.List(ctx(r), &list, opts...); err != nil {
		writeError(w, hubError(err, "listing manifestworkreplicasets "+where))
		return
	}
	rows := make([]WorkReplicaSetRow, 0, len(list.Items))
	for _, m := range list.Items {
		row := WorkReplicaSetRow{Namespace: m.Namespace, Name: m.Name, Placements: m.Status.PlacementsSummary,
			Summary: m.Status.Summary, Conditions: conditionRows(m.Status.Conditions)}
		if row.Placements == nil {
			row.Placements = []workv1alpha1.PlacementSummary{}
		}
		rows = append(rows, row)
	}
	listAnswer(w, Page[WorkReplicaSetRow]{Items: rows, Continue: list.Continue, Remaining: list.RemainingItemCount}, nil)
}

func conditionRows(conds []metav1.Condition) []fleetview.Condition {
	out := make([]fleetview.Condition, 0, len(conds))
	for _, c := range conds {
		out = append(out, fleetview.Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message})
	}
	return out
}
