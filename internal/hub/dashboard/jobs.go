package dashboard

import (
	"net/http"
	"slices"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	federationaiv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/fleetview"
)

// kueueWorkload is Kueue's Workload kind; the dashboard reads whichever version the hub serves.
var kueueWorkload = schema.GroupKind{Group: "kueue.x-k8s.io", Kind: "Workload"}

// JobRow is a Kueue Workload on the hub (internal/hub/fleetview's) with its timeline: its
// conditions in the order they last changed.
type JobRow struct {
	fleetview.Workload
	Timeline []TimelineEntry `json:"timeline"`
	// QueuePlace is a pending workload's place in its ClusterQueue, computed as `flotilla
	// explain workload` computes it (fleetview.QueuePlaces); nil when it is not pending.
	QueuePlace *fleetview.Place `json:"queuePlace,omitempty"`
}

// TimelineEntry is one condition of a workload.
type TimelineEntry struct {
	Time    string `json:"time"`
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// FederationRow is a federated-learning run and its progress.
type FederationRow struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Phase     string `json:"phase"`
	Round     int32  `json:"round"`
	Rounds    int32  `json:"rounds"`
	Clients   int    `json:"clients"`
	Message   string `json:"message,omitempty"`
}

// JobsPage is the jobs view: a page of the hub's Kueue Workloads (when it serves Kueue's API)
// and the federated-learning runs.
type JobsPage struct {
	// Served says whether the hub serves Kueue's Workloads; Message says why not.
	Served      bool            `json:"served"`
	Message     string          `json:"message,omitempty"`
	Federations []FederationRow `json:"federations"`
	Page[JobRow]
}

func (s *Server) jobs(w http.ResponseWriter, r *http.Request) {
	q, c, ok := s.begin(w, r, "limit", "continue", "namespace")
	if !ok {
		return
	}
	opts, where := listOptions(q)
	out := JobsPage{Federations: []FederationRow{}}
	out.Items = []JobRow{}
	mapping, err := s.o.Mapper.RESTMapping(kueueWorkload)
	switch {
	case meta.IsNoMatchError(err):
		out.Message = "Kueue is not installed on the hub: it serves no kueue.x-k8s.io Workloads (docs/kueue.md)"
	case err != nil:
		writeError(w, hubError(err, "discovering Kueue's API"))
		return
	default:
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(mapping.GroupVersionKind.GroupVersion().WithKind("WorkloadList"))
		if err := c.List(ctx(r), list, opts...); err != nil {
			writeError(w, hubError(err, "listing Kueue workloads "+where))
			return
		}
		out.Served = true
		out.Continue = list.GetContinue()
		out.Remaining = list.GetRemainingItemCount()
		rows := fleetview.Workloads(list.Items, s.o.Clock.Now())
		timelines := map[string][]TimelineEntry{}
		for i := range list.Items {
			timelines[list.Items[i].GetNamespace()+"/"+list.Items[i].GetName()] = timeline(list.Items[i].Object)
		}
		places := map[string]fleetview.Place{}
		if slices.ContainsFunc(rows, func(wl fleetview.Workload) bool { return wl.QuotaReserved != "True" && wl.Finished != "True" }) {
			// A place counts every pending workload of the ClusterQueue, not only this page's.
			p, why, err := fleetview.ReadQueuePlaces(ctx(r), c)
			switch {
			case err != nil:
				out.Notes = append(out.Notes, "queue positions are missing: "+hubError(err, "listing Kueue workloads and local queues").Message)
			case why != "":
				out.Notes = append(out.Notes, why)
			default:
				places = p
			}
		}
		for _, wl := range rows {
			row := JobRow{Workload: wl, Timeline: timelines[wl.Namespace+"/"+wl.Name]}
			if p, ok := places[wl.Namespace+"/"+wl.Name]; ok {
				row.QueuePlace = &p
			}
			out.Items = append(out.Items, row)
		}
	}
	if _, err := s.o.Mapper.RESTMapping(schema.GroupKind{Group: federationaiv1alpha1.GroupVersion.Group, Kind: "FederatedLearning"}); err == nil {
		var fls federationaiv1alpha1.FederatedLearningList
		if err := c.List(ctx(r), &fls, opts[2:]...); err != nil {
			out.Notes = append(out.Notes, "federated-learning runs are missing: "+hubError(err, "listing federatedlearnings "+where).Message)
		}
		for _, f := range fls.Items {
			row := FederationRow{Namespace: f.Namespace, Name: f.Name, Phase: string(f.Status.Phase), Rounds: f.Spec.Server.Rounds,
				Clients: len(f.Status.Clients), Message: f.Status.Message}
			if p := f.Status.Progress; p != nil {
				row.Round = p.Round
			}
			out.Federations = append(out.Federations, row)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// timeline is a workload's conditions, oldest change first.
func timeline(u map[string]any) []TimelineEntry {
	out := []TimelineEntry{}
	conds, _, _ := unstructured.NestedSlice(u, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		e := TimelineEntry{}
		e.Time, _ = m["lastTransitionTime"].(string)
		e.Type, _ = m["type"].(string)
		e.Status, _ = m["status"].(string)
		e.Reason, _ = m["reason"].(string)
		e.Message, _ = m["message"].(string)
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time < out[j].Time })
	return out
}

// WorkloadPage is one workload's page (GET /api/jobs/NAMESPACE/NAME): its row and its life as
// stages in time, from the Workload's own timestamps.
type WorkloadPage struct {
	JobRow
	Events []fleetview.TimelineEvent `json:"events"`
}

// workloadStages name the stage of each condition a workload's timeline shows (submitted and the
// admission checks come from its creation and status.admissionChecks).
var workloadStages = map[string]string{
	"QuotaReserved": "quota-reserved",
	"Admitted":      "admitted",
	"PodsReady":     "running",
	"Evicted":       "evicted",
	"Preempted":     "preempted",
	"Requeued":      "requeued",
	"Finished":      "finished",
}

func (s *Server) job(w http.ResponseWriter, r *http.Request) {
	_, c, ok := s.begin(w, r)
	if !ok {
		return
	}
	ns, name := r.PathValue("ns"), r.PathValue("name")
	if e := checkName("namespace", ns); e != nil {
		writeError(w, e)
		return
	}
	if e := checkName("name", name); e != nil {
		writeError(w, e)
		return
	}
	mapping, err := s.o.Mapper.RESTMapping(kueueWorkload)
	if err != nil {
		if meta.IsNoMatchError(err) {
			writeError(w, notFound("Kueue is not installed on the hub: it serves no kueue.x-k8s.io Workloads (docs/kueue.md)"))
			return
		}
		writeError(w, hubError(err, "discovering Kueue's API"))
		return
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(mapping.GroupVersionKind)
	if err := c.Get(ctx(r), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		writeError(w, hubError(err, "reading workload "+ns+"/"+name))
		return
	}
	row := JobRow{Workload: fleetview.Workloads([]unstructured.Unstructured{*u}, s.o.Clock.Now())[0], Timeline: timeline(u.Object)}
	writeJSON(w, http.StatusOK, WorkloadPage{JobRow: row, Events: workloadEvents(row, u.GetCreationTimestamp().Time)})
}

// workloadEvents are a workload's moments, oldest first, from its row: its creation, each
// admission check's and each condition's last change (Kueue keeps only the last of each), with
// the worker it was admitted on.
func workloadEvents(row JobRow, created time.Time) []fleetview.TimelineEvent {
	submitted := "created"
	if row.Queue != "" {
		submitted += " in queue " + row.Queue
	}
	out := []fleetview.TimelineEvent{{Time: created.UTC(), Stage: "submitted", Text: submitted}}
	at := func(s string) time.Time {
		t, _ := time.Parse(time.RFC3339, s)
		return t.UTC()
	}
	for _, ac := range row.AdmissionChecks {
		out = append(out, fleetview.TimelineEvent{Time: at(ac.LastTransitionTime), Stage: "admission-check", Text: joinText("check "+ac.Name+": "+ac.State, ac.Message)})
	}
	for _, e := range row.Timeline {
		stage, ok := workloadStages[e.Type]
		if !ok {
			continue
		}
		text := e.Type + "=" + e.Status
		if e.Reason != "" {
			text += " (" + e.Reason + ")"
		}
		if stage == "admitted" && e.Status == "True" && row.ClusterName != "" {
			text += " on worker " + row.ClusterName
		}
		out = append(out, fleetview.TimelineEvent{Time: at(e.Time), Stage: stage, Text: joinText(text, e.Message)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}

func joinText(a, b string) string {
	if b == "" {
		return a
	}
	return a + ": " + b
}
