package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/apimachinery/pkg/labels"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

// GPUsInput are gpu_capacity's arguments.
type GPUsInput struct {
	Model   string `json:"model,omitempty" jsonschema:"only this GPU model, as the nodes' nvidia.com/gpu.product label spells it: NVIDIA-H100-80GB-HBM3 (default: every model)"`
	Cluster string `json:"cluster,omitempty" jsonschema:"only this cluster (default: every cluster with GPUs)"`
}

func (s *server) gpuCapacity(ctx context.Context, _ *mcp.CallToolRequest, in GPUsInput) (*mcp.CallToolResult, GPUsOutput, error) {
	var names []string
	if in.Cluster != "" {
		if err := checkName("cluster", in.Cluster, true); err != nil {
			return nil, GPUsOutput{}, err
		}
		names = []string{in.Cluster}
	}
	clusters, err := s.clusters(ctx, names, labels.Everything())
	if err != nil {
		if in.Cluster != "" {
			// The one argument that names clusters here is cluster.
			return nil, GPUsOutput{}, reargue(err, "names", "cluster")
		}
		return nil, GPUsOutput{}, err
	}
	var usages usagev1alpha1.ResourceUsageList
	var notes []string
	if err := s.Client.List(ctx, &usages); err != nil {
		notes = append(notes, "free figures are missing: "+hubError(err, "listing resourceusages", "").Error())
	}
	out := gpuReport(clusters, usages.Items, in.Model, in.Cluster != "", s.Clock.Now())
	out.Notes = append(notes, out.Notes...)
	return nil, out, nil
}
