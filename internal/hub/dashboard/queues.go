package dashboard

import (
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	queuev1alpha1 "github.com/flotilla/flotilla/api/queue/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/fleetview"
)

// kueueClusterQueue is Kueue's ClusterQueue kind, which a FleetQueue's teams are.
var kueueClusterQueue = schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "ClusterQueue"}

// QueuesPage is the queue view: every FleetQueue as the hub's Kueue holds it now, and its teams'
// GPUs held and fair shares over time.
type QueuesPage struct {
	// Served says whether the hub serves FleetQueues and Kueue's ClusterQueues; Message says why not.
	Served  bool   `json:"served"`
	Message string `json:"message,omitempty"`
	// IntervalSeconds is the history's interval (0 without a history).
	IntervalSeconds int64      `json:"intervalSeconds"`
	Queues          []QueueRow `json:"queues"`
}

// QueueRow is one FleetQueue and its history, per team and model.
type QueueRow struct {
	fleetview.QueueView
	History []ShareSeries `json:"history"`
}

// queues answers GET /api/queues. A queue's figures add up every team's workloads, so the
// viewer's own identity must list FleetQueues, ClusterQueues, and LocalQueues and Workloads in
// every namespace; the history, made of the same figures, is shown to the same viewers.
func (s *Server) queues(w http.ResponseWriter, r *http.Request) {
	_, c, ok := s.begin(w, r)
	if !ok {
		return
	}
	out := QueuesPage{Queues: []QueueRow{}}
	for _, gvk := range []schema.GroupVersionKind{queuev1alpha1.GroupVersion.WithKind("FleetQueue"), kueueClusterQueue} {
		if _, err := s.o.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version); meta.IsNoMatchError(err) {
			out.Message = "the hub serves no " + gvk.Kind + " of " + gvk.GroupVersion().String() + ": the queue view needs Flotilla's FleetQueues and Kueue's kueue.x-k8s.io/v1beta2 (docs/kueue.md)"
			writeJSON(w, http.StatusOK, out)
			return
		} else if err != nil {
			writeError(w, hubError(err, "discovering "+gvk.Kind))
			return
		}
	}
	views, err := fleetview.ReadQueues(ctx(r), c)
	if err != nil {
		e := hubError(err, "reading the fleet queues")
		if e.Code == http.StatusForbidden {
			e.Message += ": a fleet queue's figures add up every team's workloads, so the queue view needs the right to list fleetqueues, clusterqueues, and localqueues and workloads in all namespaces"
		}
		writeError(w, e)
		return
	}
	out.Served = true
	if s.o.History != nil {
		out.IntervalSeconds = int64(s.o.History.interval / time.Second)
	}
	for _, v := range views {
		row := QueueRow{QueueView: v, History: []ShareSeries{}}
		if s.o.History != nil {
			row.History = s.o.History.QueueSeries(v.Name)
		}
		out.Queues = append(out.Queues, row)
	}
	writeJSON(w, http.StatusOK, out)
}
