package dashboard

import (
	"errors"
	"io"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/placementview"
	"github.com/flotilla/flotilla/internal/core/scheduler"
	"github.com/flotilla/flotilla/internal/hub/explain"
	"github.com/flotilla/flotilla/internal/hub/fleetview"
)

// maxSimulateBody bounds a what-if's body: one Placement.
const maxSimulateBody = 1 << 20

// placements is a page of placements, by namespace and name, with their decisions.
func (s *Server) placements(w http.ResponseWriter, r *http.Request) {
	q, c, ok := s.begin(w, r, "limit", "continue", "namespace")
	if !ok {
		return
	}
	where := "in every namespace"
	opts := []client.ListOption{client.Limit(q.Limit), client.Continue(q.Continue)}
	var dopts []client.ListOption
	if q.Namespace != "" {
		where = "in namespace " + q.Namespace
		opts = append(opts, client.InNamespace(q.Namespace))
		dopts = append(dopts, client.InNamespace(q.Namespace))
	}
	var list clusterv1beta1.PlacementList
	if err := c.List(ctx(r), &list, opts...); err != nil {
		writeError(w, hubError(err, "listing placements "+where))
		return
	}
	var decisions clusterv1beta1.PlacementDecisionList
	if len(list.Items) > 0 {
		if err := c.List(ctx(r), &decisions, dopts...); err != nil {
			writeError(w, hubError(err, "listing placementdecisions "+where))
			return
		}
	}
	listAnswer(w, Page[fleetview.Placement]{Items: fleetview.PlacementReports(list.Items, decisions.Items),
		Continue: list.Continue, Remaining: list.RemainingItemCount}, nil)
}

// Explanation is a placement's explanation: what `flotilla explain placement -o json` gives,
// with the Placement as YAML for the what-if editor.
type Explanation struct {
	Explanation placementview.Output `json:"explanation"`
	// Placement is the placement's apiVersion, kind, name, namespace and spec as YAML.
	Placement string `json:"placement"`
	// Hub is the placement as the hub's PlacementDecisions and status hold it (the explanation
	// schedules it now, which can differ while the hub catches up); absent for a what-if.
	Hub *fleetview.Placement `json:"hub,omitempty"`
}

func (s *Server) explain(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	if e := s.checkPlacementPath(ns, name); e != nil {
		writeError(w, e)
		return
	}
	c, e := s.client(r)
	if e != nil {
		writeError(w, e)
		return
	}
	var p clusterv1beta1.Placement
	if err := c.Get(ctx(r), client.ObjectKey{Namespace: ns, Name: name}, &p); err != nil {
		writeError(w, hubError(err, "reading placement "+ns+"/"+name))
		return
	}
	out, e := s.schedule(r, c, &p)
	if e != nil {
		writeError(w, e)
		return
	}
	edit := clusterv1beta1.Placement{TypeMeta: metav1.TypeMeta{APIVersion: clusterv1beta1.GroupVersion.String(), Kind: "Placement"},
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}, Spec: p.Spec}
	y, err := yaml.Marshal(&edit)
	if err != nil {
		writeError(w, &apiError{Code: http.StatusInternalServerError, Message: "writing the placement as YAML: " + err.Error()})
		return
	}
	var decisions clusterv1beta1.PlacementDecisionList
	if err := c.List(ctx(r), &decisions, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: name}); err != nil {
		writeError(w, hubError(err, "listing the placementdecisions of placement "+ns+"/"+name))
		return
	}
	hub := fleetview.PlacementReports([]clusterv1beta1.Placement{p}, decisions.Items)[0]
	writeJSON(w, http.StatusOK, Explanation{Explanation: out, Placement: string(y), Hub: &hub})
}

// simulate is the what-if: it schedules the Placement in the body (JSON or YAML) against the
// fleet read now with the viewer's identity, as `flotilla placement simulate` does, and creates
// nothing.
func (s *Server) simulate(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	if e := s.checkPlacementPath(ns, name); e != nil {
		writeError(w, e)
		return
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSimulateBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, &apiError{Code: http.StatusRequestEntityTooLarge, Message: "the body is larger than 1 MiB: send one Placement"})
			return
		}
		writeError(w, badRequest("reading the body: %v", err))
		return
	}
	p, err := explain.DecodePlacement(data, ns)
	if err != nil {
		writeError(w, badRequest("the what-if's Placement: %v", err))
		return
	}
	c, e := s.client(r)
	if e != nil {
		writeError(w, e)
		return
	}
	out, e := s.schedule(r, c, p)
	if e != nil {
		writeError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, Explanation{Explanation: out})
}

// schedule schedules p with the hub's scheduling core against the fleet read with c.
func (s *Server) schedule(r *http.Request, c client.Reader, p *clusterv1beta1.Placement) (placementview.Output, *apiError) {
	fleet, err := placementview.ListFleet(ctx(r), c, p.Namespace)
	if err != nil {
		return placementview.Output{}, hubError(err, "reading the fleet for placements in namespace "+p.Namespace)
	}
	res := scheduler.New(s.o.Clock).Schedule(p, placementview.SnapshotFrom(fleet, p.Namespace, p.Name))
	return placementview.NewOutput(p.Namespace, p.Name, &res), nil
}

func (s *Server) checkPlacementPath(ns, name string) *apiError {
	if e := checkName("namespace", ns); e != nil {
		return e
	}
	return checkName("placement", name)
}
