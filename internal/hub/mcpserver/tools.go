package mcpserver

import "github.com/modelcontextprotocol/go-sdk/mcp"

// addReadTools adds every tool that only reads.
func (s *server) addReadTools(m *mcp.Server) {
	s.addClusterTools(m)
	s.addPlacementTools(m)
	s.addWorkTools(m)
	s.addKueueTools(m)
}

// ReadTools and WriteTools name the tools, in the order docs/mcp.md lists them.
var (
	ReadTools  = []string{"list_clusters", "gpu_capacity", "list_placements", "explain_placement", "placement_simulate", "list_manifestworks", "kueue_workloads", "explain_workload"}
	WriteTools = []string{"patch_placement", "set_addon_placement_score"}
)
