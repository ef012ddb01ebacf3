package dashboard

import (
	"net/http"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/hub/fleetview"
)

// clusters is the fleet view: a page of ManagedClusters in name order (the API server's own
// paging), with their sets and heartbeats.
func (s *Server) clusters(w http.ResponseWriter, r *http.Request) {
	p, e := s.clusterPage(r)
	listAnswer(w, p, e)
}

func (s *Server) clusterPage(r *http.Request) (Page[fleetview.Cluster], *apiError) {
	q, e := parseQuery(r.URL.Query(), "limit", "continue", "labelSelector")
	if e != nil {
		return Page[fleetview.Cluster]{}, e
	}
	c, e := s.client(r)
	if e != nil {
		return Page[fleetview.Cluster]{}, e
	}
	var list clusterv1.ManagedClusterList
	if err := c.List(ctx(r), &list, client.Limit(q.Limit), client.Continue(q.Continue), client.MatchingLabelsSelector{Selector: q.LabelSelector}); err != nil {
		return Page[fleetview.Cluster]{}, hubError(err, "listing managedclusters")
	}
	var notes []string
	var sets clusterv1beta2.ManagedClusterSetList
	if err := c.List(ctx(r), &sets); err != nil {
		if apierrors.IsUnauthorized(err) {
			return Page[fleetview.Cluster]{}, hubError(err, "listing managedclustersets")
		}
		notes = append(notes, "cluster sets are missing: "+hubError(err, "listing managedclustersets").Message)
	}
	leases, note := s.leases(r, c, list.Items)
	if note != "" {
		notes = append(notes, note)
	}
	return Page[fleetview.Cluster]{Items: fleetview.ClusterReports(list.Items, sets.Items, leases, s.o.Clock.Now()),
		Continue: list.Continue, Remaining: list.RemainingItemCount, Notes: notes}, nil
}

// leases reads the heartbeat leases of clusters: the page's own when it is small, else all of
// them in one list.
func (s *Server) leases(r *http.Request, c client.Client, clusters []clusterv1.ManagedCluster) ([]coordinationv1.Lease, string) {
	var out []coordinationv1.Lease
	if len(clusters) <= 20 {
		for i := range clusters {
			var l coordinationv1.Lease
			err := c.Get(ctx(r), client.ObjectKey{Namespace: clusters[i].Name, Name: clusterv1.ManagedClusterLeaseName}, &l)
			switch {
			case err == nil:
				out = append(out, l)
			case apierrors.IsNotFound(err):
			default:
				return nil, "heartbeats are missing: " + hubError(err, "reading the clusters' leases ("+clusterv1.ManagedClusterLeaseName+")").Message
			}
		}
		return out, ""
	}
	var list coordinationv1.LeaseList
	if err := c.List(ctx(r), &list, client.MatchingFields{"metadata.name": clusterv1.ManagedClusterLeaseName}); err != nil {
		return nil, "heartbeats are missing: " + hubError(err, "listing the clusters' leases ("+clusterv1.ManagedClusterLeaseName+" in each cluster's namespace)").Message
	}
	return list.Items, ""
}

// timeline answers GET /api/clusters/{name}/timeline: the cluster's last loss as its objects
// record it (fleetview.ClusterTimeline), read as the viewer. A lease or workload the viewer may
// not read is left out (the timeline notes the workloads), never read with other rights.
func (s *Server) timeline(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if e := checkName("cluster", name); e != nil {
		writeError(w, e)
		return
	}
	_, c, ok := s.begin(w, r)
	if !ok {
		return
	}
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx(r), client.ObjectKey{Name: name}, mc); err != nil {
		writeError(w, hubError(err, "reading managedcluster "+name))
		return
	}
	lease := &coordinationv1.Lease{}
	if err := c.Get(ctx(r), client.ObjectKey{Namespace: name, Name: clusterv1.ManagedClusterLeaseName}, lease); err != nil {
		lease = nil
	}
	writeJSON(w, http.StatusOK, fleetview.ClusterTimeline(mc, lease, fleetview.RequeuedWorkloads(ctx(r), c, mc)))
}
