package dashboard

import (
	"context"
	"net/http"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/fleetview"
)

// GPUPage is the GPU view: the fleet's totals per model, and a page of the clusters with GPUs,
// per model (internal/hub/fleetview's report). A page holds no node's figures, however many
// nodes the clusters have; with ?cluster=NAME it holds that one cluster with each node's (the GPU
// map's zoom).
type GPUPage struct {
	Models []fleetview.ModelTotal `json:"models"`
	Page[fleetview.ClusterGPUs]
}

func (s *Server) gpus(w http.ResponseWriter, r *http.Request) {
	q, c, ok := s.begin(w, r, "limit", "continue", "cluster")
	if !ok {
		return
	}
	// The totals are the fleet's: every cluster is read.
	clusters, err := allClusters(ctx(r), c)
	if err != nil {
		writeError(w, hubError(err, "listing managedclusters"))
		return
	}
	var notes []string
	var usages usagev1alpha1.ResourceUsageList
	if err := c.List(ctx(r), &usages, client.MatchingFields{"metadata.name": usagev1alpha1.ResourceUsageName}); err != nil {
		if apierrors.IsUnauthorized(err) {
			writeError(w, hubError(err, "listing resourceusages"))
			return
		}
		notes = append(notes, "free figures are missing: "+hubError(err, "listing resourceusages").Message)
	}
	report := fleetview.GPUReport(clusters, usages.Items, "", false, s.o.Clock.Now())
	var items []fleetview.ClusterGPUs
	var next string
	if q.Cluster != "" {
		i := slices.IndexFunc(report.Clusters, func(g fleetview.ClusterGPUs) bool { return g.Cluster == q.Cluster })
		if i < 0 {
			writeError(w, notFound("cluster %q has no GPUs, or is no ManagedCluster you may read: see the fleet view for its name", q.Cluster))
			return
		}
		items = report.Clusters[i : i+1]
	} else {
		var e *apiError
		if items, next, e = after(report.Clusters, func(g fleetview.ClusterGPUs) string { return g.Cluster }, q); e != nil {
			writeError(w, e)
			return
		}
		items = withoutNodes(items)
	}
	out := GPUPage{Models: report.Models, Page: Page[fleetview.ClusterGPUs]{Items: items, Continue: next, Notes: append(notes, report.Notes...)}}
	if out.Items == nil {
		out.Items = []fleetview.ClusterGPUs{}
	}
	writeJSON(w, http.StatusOK, out)
}

// withoutNodes is items without their nodes' figures (a page of clusters, not zoomed).
func withoutNodes(items []fleetview.ClusterGPUs) []fleetview.ClusterGPUs {
	out := make([]fleetview.ClusterGPUs, len(items))
	for i, c := range items {
		c.Models = slices.Clone(c.Models)
		for j := range c.Models {
			if f := c.Models[j].Figures; f != nil && f.Nodes != nil {
				g := *f
				g.Nodes = nil
				c.Models[j].Figures = &g
			}
		}
		out[i] = c
	}
	return out
}

// allClusters lists every ManagedCluster c may read, in pages of MaxLimit.
func allClusters(ctx context.Context, c client.Reader) ([]clusterv1.ManagedCluster, error) {
	var clusters []clusterv1.ManagedCluster
	cont := ""
	for {
		var list clusterv1.ManagedClusterList
		if err := c.List(ctx, &list, client.Limit(MaxLimit), client.Continue(cont)); err != nil {
			return nil, err
		}
		clusters = append(clusters, list.Items...)
		if cont = list.Continue; cont == "" {
			return clusters, nil
		}
	}
}
