package mcpserver

import (
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Name is the server's name in the MCP handshake.
const Name = "flotilla"

// Options configure the server.
type Options struct {
	// Client reads, and with AllowWrites writes, the hub with the caller's identity.
	Client client.Client
	// Discovery says which APIs the hub serves (whether Kueue's CRDs are installed), with the same
	// identity.
	Discovery discovery.DiscoveryInterface
	Clock     clock.PassiveClock
	// Namespace is the namespace of namespaced arguments left out: the kubeconfig context's.
	Namespace string
	// AllowWrites adds the write tools; without it they are not listed and calling them fails.
	AllowWrites bool
	// Version is the server's version in the MCP handshake.
	Version string
}

// server holds what the tool handlers share.
type server struct {
	Options
}

// New returns an MCP server with the read tools and, with o.AllowWrites, the write tools.
func New(o Options) *mcp.Server {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	s := &server{Options: o}
	m := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "Flotilla fleet", Version: o.Version}, &mcp.ServerOptions{
		Instructions: instructions(o.AllowWrites),
	})
	s.addReadTools(m)
	if o.AllowWrites {
		s.addWriteTools(m)
	}
	return m
}

func instructions(writes bool) string {
	text := "Flotilla is a hub for a fleet of Kubernetes clusters (Open Cluster Management APIs). These tools read the hub " +
		"with the kubeconfig identity flotilla mcp was started with, so the hub's RBAC decides what you may see. " +
		"Start with list_clusters or gpu_capacity; list_placements shows where placements put work and " +
		"explain_placement why; placement_simulate answers what-ifs without changing anything; kueue_workloads lists batch jobs " +
		"queued on the hub and explain_workload says why one waits."
	if writes {
		text += " Writes are allowed: patch_placement changes a Placement's spec (try dryRun first) and " +
			"set_addon_placement_score writes scores placements may rank by."
	} else {
		text += " Writes are not allowed: start flotilla mcp with --allow-writes for patch_placement and set_addon_placement_score."
	}
	return text
}

// readOnly marks a tool that changes nothing.
var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptrTo(false)}

func ptrTo[T any](v T) *T { return &v }

// typeSchemas are the schemas of Kubernetes types whose JSON is not their Go structure: they
// marshal to strings (times, quantities) or to an integer or a string.
var typeSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[metav1.Time]():        {Type: "string", Description: "an RFC 3339 time"},
	reflect.TypeFor[resource.Quantity]():  {Type: "string", Description: "a Kubernetes quantity"},
	reflect.TypeFor[intstr.IntOrString](): {Types: []string{"integer", "string"}},
}

// schemaFor is the JSON schema of T, with the Kubernetes types of typeSchemas described as they
// marshal. It panics on a type that has none: tool types are fixed at build time, and a test
// registers every tool.
func schemaFor[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: typeSchemas})
	if err != nil {
		panic(err)
	}
	return s
}

// addTool adds a tool whose input and output schemas come from In and Out.
func addTool[In, Out any](m *mcp.Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	t.InputSchema = schemaFor[In]()
	t.OutputSchema = schemaFor[Out]()
	mcp.AddTool(m, t, h)
}
