package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// WorksInput are list_manifestworks' arguments.
type WorksInput struct {
	Cluster string `json:"cluster,omitempty" jsonschema:"only the works of this cluster (those in the namespace named after it; default: every cluster's)"`
	Name    string `json:"name,omitempty" jsonschema:"only works of this name"`
}

func (s *server) addWorkTools(m *mcp.Server) {
	addTool(m, &mcp.Tool{Name: "list_manifestworks", Annotations: readOnly,
		Description: "List ManifestWorks per cluster with whether each is applied and available there (as the cluster's agent reports), " +
			"how many of its manifests are, and the ManifestWorkReplicaSet that made it; and a per-cluster count."}, s.listWorks)
}

func (s *server) listWorks(ctx context.Context, _ *mcp.CallToolRequest, in WorksInput) (*mcp.CallToolResult, WorksOutput, error) {
	if err := checkNamespace("cluster", in.Cluster); err != nil {
		return nil, WorksOutput{}, err
	}
	if err := checkName("name", in.Name, false); err != nil {
		return nil, WorksOutput{}, err
	}
	var opts []client.ListOption
	where := "of every cluster"
	if in.Cluster != "" {
		opts = append(opts, client.InNamespace(in.Cluster))
		where = "of cluster " + in.Cluster
	}
	if in.Name != "" {
		opts = append(opts, client.MatchingFields{"metadata.name": in.Name})
	}
	var works workv1.ManifestWorkList
	if err := s.Client.List(ctx, &works, opts...); err != nil {
		return nil, WorksOutput{}, hubError(err, "listing manifestworks "+where, "")
	}
	return nil, workReport(works.Items), nil
}
