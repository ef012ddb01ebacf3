package mcpserver

import (
	"context"
	"slices"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
)

// ClustersInput are list_clusters' arguments.
type ClustersInput struct {
	Names         []string `json:"names,omitempty" jsonschema:"only these clusters (default: every cluster the hub has)"`
	LabelSelector string   `json:"labelSelector,omitempty" jsonschema:"only clusters whose labels match this selector, as kubectl -l takes it: region=us-east,gpu (default: every cluster)"`
}

// ClustersOutput is list_clusters' answer.
type ClustersOutput struct {
	Clusters []Cluster `json:"clusters"`
	// Notes say what could not be read (leases, sets) and so is missing from the clusters.
	Notes []string `json:"notes,omitempty"`
}

func (s *server) addClusterTools(m *mcp.Server) {
	addTool(m, &mcp.Tool{Name: "list_clusters", Annotations: readOnly,
		Description: "List the fleet's managed clusters: acceptance, availability, heartbeat (seconds since the lease was renewed), " +
			"taints, cluster sets, labels, claims and allocatable GPUs by model."}, s.listClusters)
	addTool(m, &mcp.Tool{Name: "gpu_capacity", Annotations: readOnly,
		Description: "GPU capacity of the fleet per model, per cluster and per node: allocatable GPUs from the agents' claims, and live " +
			"free GPUs with how many nodes have at least k free from each cluster's ResourceUsage (the resource-usage add-on). " +
			"Free figures count only when current (usage: current); expired ones are shown but not added up."}, s.gpuCapacity)
}

func (s *server) listClusters(ctx context.Context, _ *mcp.CallToolRequest, in ClustersInput) (*mcp.CallToolResult, ClustersOutput, error) {
	sel, err := parseSelector("labelSelector", in.LabelSelector)
	if err != nil {
		return nil, ClustersOutput{}, err
	}
	for _, n := range in.Names {
		if err := checkName("names", n, true); err != nil {
			return nil, ClustersOutput{}, err
		}
	}
	clusters, err := s.clusters(ctx, in.Names, sel)
	if err != nil {
		return nil, ClustersOutput{}, err
	}
	var notes []string
	var sets clusterv1beta2.ManagedClusterSetList
	if err := s.Client.List(ctx, &sets); err != nil {
		notes = append(notes, "cluster sets are missing: "+hubError(err, "listing managedclustersets", "").Error())
	}
	var leases coordinationv1.LeaseList
	if err := s.Client.List(ctx, &leases, client.MatchingFields{"metadata.name": clusterv1.ManagedClusterLeaseName}); err != nil {
		notes = append(notes, "heartbeats are missing: "+hubError(err, "listing the clusters' leases ("+clusterv1.ManagedClusterLeaseName+" in each cluster's namespace)", "").Error())
	}
	return nil, ClustersOutput{Clusters: clusterReports(clusters, sets.Items, leases.Items, s.Clock.Now()), Notes: notes}, nil
}

// clusters lists the clusters named (every one when none is) whose labels match sel, by name. A
// named cluster that is not on the hub is an error.
func (s *server) clusters(ctx context.Context, names []string, sel labels.Selector) ([]clusterv1.ManagedCluster, error) {
	var list clusterv1.ManagedClusterList
	if err := s.Client.List(ctx, &list, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, hubError(err, "listing managedclusters", "")
	}
	out := list.Items
	if len(names) > 0 {
		out = out[:0:0]
		for _, n := range names {
			i := slices.IndexFunc(list.Items, func(c clusterv1.ManagedCluster) bool { return c.Name == n })
			if i < 0 {
				if sel.Empty() {
					return nil, argError("names", "the hub has no cluster %q: list them with list_clusters and no arguments", n)
				}
				return nil, argError("names", "the hub has no cluster %q whose labels match %q: drop labelSelector, or list the clusters with list_clusters", n, sel)
			}
			out = append(out, list.Items[i])
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
