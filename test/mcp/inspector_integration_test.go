//go:build integration

package mcp

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// inspector is the MCP reference inspector (npm @modelcontextprotocol/inspector), pinned by
// inspector/package-lock.json and installed by `make npm-deps`.
var inspector = filepath.Join("inspector", "node_modules", ".bin", "mcp-inspector")

// TestInspectorCLI drives `flotilla mcp` over stdio with the command-line client of the MCP
// reference inspector: a client Flotilla did not write lists the tools, calls one, and gets an MCP
// error naming a bad argument.
func TestInspectorCLI(t *testing.T) {
	if _, err := os.Stat(inspector); err != nil {
		t.Fatalf("the MCP inspector is not installed (%v): run make npm-deps", err)
	}
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := env.HubClient(t)
	name := env.Namespace(t, env.Hub)
	testenv.Create(t, c, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"seen-by": "inspector"}}})
	catalog := filepath.Join(t.TempDir(), "mcp.json") // the inspector's own state, out of $HOME
	// run returns what the inspector prints; it exits non-zero when the tool answers an error, so
	// toolError says when that is expected.
	run := func(toolError bool, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(inspector, append([]string{"--cli", flotillaBin, "mcp", "--kubeconfig", env.Hub.Kubeconfig}, args...)...)
		cmd.Env = append(os.Environ(), "MCP_CATALOG_PATH="+catalog)
		cmd.Stderr = testWriter{t}
		out, err := cmd.Output()
		var exit *exec.ExitError
		if err != nil && (!toolError || !errors.As(err, &exit)) {
			t.Fatalf("mcp-inspector --cli %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}

	var listed struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(run(false, "--method", "tools/list"), &listed); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range listed.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"list_clusters", "gpu_capacity", "explain_placement", "placement_simulate"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list = %v, want %s among them", names, want)
		}
	}
	for _, write := range []string{"patch_placement", "set_addon_placement_score"} {
		if slices.Contains(names, write) {
			t.Errorf("tools/list offers %s without --allow-writes", write)
		}
	}

	type result struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	var clusters result
	if err := json.Unmarshal(run(false, "--method", "tools/call", "--tool-name", "list_clusters"), &clusters); err != nil {
		t.Fatalf("tools/call list_clusters: %v", err)
	}
	if clusters.IsError || len(clusters.Content) == 0 || !strings.Contains(clusters.Content[0].Text, name) {
		t.Errorf("list_clusters through the inspector = %+v, want cluster %s", clusters, name)
	}

	var bad result
	if err := json.Unmarshal(run(true, "--method", "tools/call", "--tool-name", "list_clusters", "--tool-arg", "limit=3"), &bad); err != nil {
		t.Fatalf("tools/call list_clusters limit=3: %v", err)
	}
	if !bad.IsError || len(bad.Content) == 0 || !strings.Contains(bad.Content[0].Text, `"limit"`) {
		t.Errorf("list_clusters with an unknown argument = %+v, want an MCP error naming \"limit\"", bad)
	}
}
