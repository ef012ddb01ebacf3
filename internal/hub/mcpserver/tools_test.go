package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// connect serves New(o) in memory and returns a client session of it. The server has no client
// of a hub: these tests call nothing that reaches one.
func connect(t *testing.T, o Options) *mcp.ClientSession {
	t.Helper()
	o.Clock = clocktesting.NewFakePassiveClock(now)
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := New(o).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema == nil || tool.OutputSchema == nil {
			t.Errorf("tool %s has no input or output schema", tool.Name)
		}
	}
	return names
}

func TestToolsListed(t *testing.T) {
	sorted := func(names []string) []string {
		out := append([]string{}, names...)
		for i := range out {
			for j := i + 1; j < len(out); j++ {
				if out[j] < out[i] {
					out[i], out[j] = out[j], out[i]
				}
			}
		}
		return out
	}
	if diff := cmp.Diff(sorted(ReadTools), sorted(toolNames(t, connect(t, Options{})))); diff != "" {
		t.Errorf("tools without writes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sorted(append(append([]string{}, ReadTools...), WriteTools...)), sorted(toolNames(t, connect(t, Options{AllowWrites: true})))); diff != "" {
		t.Errorf("tools with writes (-want +got):\n%s", diff)
	}
}

func TestWriteToolsRefusedWithoutAllowWrites(t *testing.T) {
	cs := connect(t, Options{})
	for _, name := range WriteTools {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"name": "x"}})
		if err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("calling %s without --allow-writes: %v, want an unknown tool error", name, err)
		}
	}
}

// TestBadArguments checks that bad arguments are tool errors naming the argument, before any call
// to the hub (the server has no client: a call would panic).
func TestBadArguments(t *testing.T) {
	cs := connect(t, Options{AllowWrites: true})
	cases := map[string]struct {
		tool string
		args map[string]any
		want []string
	}{
		"unknown argument": {tool: "list_placements", args: map[string]any{"namespaces": "ml"},
			want: []string{"namespaces"}},
		"wrong type": {tool: "list_placements", args: map[string]any{"allNamespaces": "yes"},
			want: []string{"allNamespaces"}},
		"missing required": {tool: "explain_placement", args: map[string]any{"namespace": "ml"},
			want: []string{"name"}},
		"explain_workload without a name": {tool: "explain_workload", args: map[string]any{"namespace": "ml"},
			want: []string{"name"}},
		"explain_workload with a bad name": {tool: "explain_workload", args: map[string]any{"name": "ml/train"},
			want: []string{`argument "name"`}},
		"bad namespace": {tool: "list_placements", args: map[string]any{"namespace": "ML_team"},
			want: []string{`argument "namespace"`, "not a valid namespace"}},
		"namespace and allNamespaces": {tool: "kueue_workloads", args: map[string]any{"namespace": "ml", "allNamespaces": true},
			want: []string{`argument "allNamespaces"`, "contradicts namespace"}},
		"bad selector": {tool: "list_clusters", args: map[string]any{"labelSelector": "region in us"},
			want: []string{`argument "labelSelector"`, "kubectl -l"}},
		"bad cluster name": {tool: "gpu_capacity", args: map[string]any{"cluster": "East!"},
			want: []string{`argument "cluster"`, "not a valid name"}},
		"bad name": {tool: "list_manifestworks", args: map[string]any{"name": "Train/1"},
			want: []string{`argument "name"`}},
		"placements not YAML": {tool: "placement_simulate", args: map[string]any{"placements": "kind: [", "fleet": "---"},
			want: []string{`argument "placements"`, "malformed YAML"}},
		"no placement": {tool: "placement_simulate", args: map[string]any{"placements": "---\n", "fleet": "---"},
			want: []string{`argument "placements"`, "holds no Placement"}},
		"a fleet object among the placements": {tool: "placement_simulate",
			args: map[string]any{"fleet": "---", "placements": "apiVersion: cluster.open-cluster-management.io/v1\nkind: ManagedCluster\nmetadata: {name: a}\n---\n" +
				"apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\nmetadata: {name: p}\n"},
			want: []string{`argument "placements"`, "move them to the fleet argument"}},
		"a placement in the fleet": {tool: "placement_simulate",
			args: map[string]any{"placements": "apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\nmetadata: {name: p}\n",
				"fleet": "apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\nmetadata: {name: q}\n"},
			want: []string{`argument "fleet"`, "holds 1 Placements"}},
		"a patch without a change": {tool: "patch_placement", args: map[string]any{"name": "p"},
			want: []string{"needs a change", "numberOfClusters, predicates or prioritizerPolicy"}},
		"scores out of range": {tool: "set_addon_placement_score", args: map[string]any{"cluster": "east", "name": "s", "scores": []any{map[string]any{"name": "a", "value": 101}}},
			want: []string{`argument "scores"`, "from -100 to 100"}},
		"no scores": {tool: "set_addon_placement_score", args: map[string]any{"cluster": "east", "name": "s", "scores": []any{}},
			want: []string{`argument "scores"`, "at least one"}},
		"validFor not positive": {tool: "set_addon_placement_score", args: map[string]any{"cluster": "east", "name": "s", "validForSeconds": 0,
			"scores": []any{map[string]any{"name": "a", "value": 1}}},
			want: []string{`argument "validForSeconds"`, "positive"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatalf("CallTool: %v, want a tool error", err)
			}
			text := resultText(res)
			if !res.IsError {
				t.Fatalf("result %s, want a tool error", text)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("error %q does not hold %q", text, w)
				}
			}
		})
	}
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func TestPlacementPatch(t *testing.T) {
	cases := map[string]struct {
		in   PatchPlacementInput
		want string
	}{
		"number": {in: PatchPlacementInput{NumberOfClusters: ptr.To[int32](3)},
			want: `[{"op":"add","path":"/spec/numberOfClusters","value":3}]`},
		"every field, each replaced": {
			in: PatchPlacementInput{NumberOfClusters: ptr.To[int32](0), Predicates: []map[string]any{{"requiredClusterSelector": map[string]any{}}},
				PrioritizerPolicy: map[string]any{"mode": "Exact"}},
			want: `[{"op":"add","path":"/spec/numberOfClusters","value":0},` +
				`{"op":"add","path":"/spec/predicates","value":[{"requiredClusterSelector":{}}]},` +
				`{"op":"add","path":"/spec/prioritizerPolicy","value":{"mode":"Exact"}}]`},
		"no predicates at all": {in: PatchPlacementInput{Predicates: []map[string]any{}},
			want: `[{"op":"add","path":"/spec/predicates","value":[]}]`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := placementPatch(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("placementPatch (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := placementPatch(PatchPlacementInput{Name: "p"}); err == nil {
		t.Error("placementPatch of no change: no error")
	}
}

func TestCheckScores(t *testing.T) {
	cases := map[string]struct {
		scores []ScoreValue
		want   string
	}{
		"fine":      {scores: []ScoreValue{{Name: "a", Value: -100}, {Name: "b", Value: 100}}},
		"twice":     {scores: []ScoreValue{{Name: "a"}, {Name: "a"}}, want: `name "a" is given twice`},
		"no name":   {scores: []ScoreValue{{Value: 1}}, want: "entry 0 has no name"},
		"too small": {scores: []ScoreValue{{Name: "a", Value: -101}}, want: "value -101"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := checkScores(tc.scores)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if (tc.want == "") != (err == nil) || !strings.Contains(got, tc.want) {
				t.Errorf("checkScores: %v, want an error holding %q", err, tc.want)
			}
		})
	}
}

func TestCheckLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:0": true, "localhost:8080": true, "[::1]:9000": true, "127.0.0.2:1": true,
		":8080": false, "0.0.0.0:8080": false, "10.0.0.1:80": false, "example.com:80": false, "127.0.0.1": false,
	} {
		err := CheckLoopback(addr)
		if (err == nil) != ok {
			t.Errorf("CheckLoopback(%q) = %v, want ok %v", addr, err, ok)
		}
	}
}

func TestWorkloads(t *testing.T) {
	obj := func(js string) unstructured.Unstructured {
		var u unstructured.Unstructured
		if err := json.Unmarshal([]byte(js), &u.Object); err != nil {
			t.Fatal(err)
		}
		return u
	}
	items := []unstructured.Unstructured{
		obj(`{"metadata":{"namespace":"ml","name":"job-train","creationTimestamp":"2026-03-01T11:59:00Z"},
			"spec":{"queueName":"gpu","podSets":[{"name":"main","count":4}]},
			"status":{"admission":{"clusterQueue":"cq"},"clusterName":"gpu-east","nominatedClusterNames":["gpu-east","gpu-west"],
			"conditions":[{"type":"QuotaReserved","status":"True","lastTransitionTime":"2026-03-01T11:59:10Z","message":"Quota reserved"},
			              {"type":"Admitted","status":"True","lastTransitionTime":"2026-03-01T11:59:20Z","message":"The workload is admitted"}],
			"admissionChecks":[{"name":"multikueue","state":"Ready","message":"The workload got reservation on \"gpu-east\""}]}}`),
		// Fields of the wrong types are left out, not a panic.
		obj(`{"metadata":{"namespace":"a","name":"odd"},"spec":{"queueName":7,"podSets":["x",{"name":1,"count":"2"}]},
			"status":{"conditions":["x",{"type":5}],"admissionChecks":[3]}}`),
	}
	got := workloads(items, now)
	want := []Workload{
		{Namespace: "a", Name: "odd", AdmissionChecks: []AdmissionCheck{}, PodSets: []PodSet{{}}},
		{Namespace: "ml", Name: "job-train", Queue: "gpu", ClusterQueue: "cq", QuotaReserved: "True", Admitted: "True",
			ClusterName: "gpu-east", NominatedClusterNames: []string{"gpu-east", "gpu-west"},
			AdmissionChecks: []AdmissionCheck{{Name: "multikueue", State: "Ready", Message: `The workload got reservation on "gpu-east"`}},
			PodSets:         []PodSet{{Name: "main", Count: 4}}, AgeSeconds: ptr.To[int64](60), Message: "The workload is admitted"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("workloads (-want +got):\n%s", diff)
	}
}
