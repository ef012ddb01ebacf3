//go:build integration

package mcp

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/core/placementview"
	"github.com/flotilla/flotilla/internal/hub/mcpserver"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const wait = 60 * time.Second

// serve runs `flotilla mcp args...` over stdio and returns a client session of it, closed (and
// the process ended) when the test ends.
func serve(t *testing.T, args ...string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(flotillaBin, append([]string{"mcp"}, args...)...)
	cmd.Stderr = testWriter{t}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to flotilla mcp %v over stdio: %v", args, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// serveHTTP runs `flotilla mcp --http 127.0.0.1:0 args...`, reads the URL it prints first, and
// returns a client session of it over streamable HTTP.
func serveHTTP(t *testing.T, args ...string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(flotillaBin, append([]string{"mcp", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Stderr = testWriter{t}
	url := testenv.StartFirstLine(t, cmd)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, mcpserver.Path) {
		t.Fatalf("flotilla mcp --http printed %q first, want http://127.0.0.1:PORT%s", url, mcpserver.Path)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("flotilla mcp: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// call calls tool and decodes its structured answer into out; a tool error fails the test.
func call(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any, out any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	if res.IsError {
		t.Fatalf("%s %v: tool error %s", tool, args, text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: decoding %s: %v", tool, b, err)
	}
}

// toolError calls tool, which must answer with a tool error, and returns its text.
func toolError(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v, want a tool error", tool, args, err)
	}
	if !res.IsError {
		t.Fatalf("%s %v: %s, want a tool error", tool, args, text(res))
	}
	return text(res)
}

func text(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func tools(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func sorted(lists ...[]string) []string {
	out := slices.Concat(lists...)
	slices.Sort(out)
	return out
}

// writeStatus writes obj's status as mutate leaves it, as an agent or add-on would, retrying on
// conflicts with the hub's controllers.
func writeStatus[T client.Object](t *testing.T, c client.Client, obj T, mutate func(T)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		mutate(obj)
		return c.Status().Update(context.Background(), obj)
	})
	if err != nil {
		t.Fatalf("writing the status of %T %s: %v", obj, obj.GetName(), err)
	}
}

// tokenKubeconfig makes service account name in ns, bound to a Role of rules there, and writes a
// kubeconfig of the hub with its token and ns as the context's namespace.
func tokenKubeconfig(t *testing.T, env *testenv.Env, ns, name string, rules ...rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	cs := env.Hub.Client
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := env.Hub.RESTConfig()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, CertificateAuthority: cfg.CAFile}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: name, Namespace: ns}
	kc.CurrentContext = name
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMCP(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := env.HubClient(t)
	ctx := context.Background()
	ns := env.Namespace(t, env.Hub)
	// The clusters are named after namespaces of their own, where their works, lease and figures live.
	gpuCluster, cpuCluster := env.Namespace(t, env.Hub), env.Namespace(t, env.Hub)
	set := "mcp-" + ns
	testenv.Create(t, c, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel}}})
	testenv.Create(t, c, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: set, Namespace: ns},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set}})
	gpu := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: gpuCluster, Labels: map[string]string{clusterv1beta2.ClusterSetLabel: set, "gpu": "h100"}}}
	testenv.Create(t, c, gpu)
	testenv.Create(t, c, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cpuCluster, Labels: map[string]string{clusterv1beta2.ClusterSetLabel: set}}})
	// What the cluster's agent reports: healthy, 16 H100s; its lease renewed 5 seconds ago.
	writeStatus(t, c, gpu, func(mc *clusterv1.ManagedCluster) {
		mc.Status.Conditions = append(mc.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable,
			Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable", Message: "Managed cluster is available", LastTransitionTime: metav1.Now()})
		mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{
			{Name: clusterv1.GPUModelsClaim, Value: "NVIDIA-H100-80GB-HBM3"},
			{Name: clusterv1.GPUCountClaimName("NVIDIA-H100-80GB-HBM3"), Value: "16"},
		}
	})
	testenv.Create(t, c, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: gpuCluster, Name: clusterv1.ManagedClusterLeaseName},
		Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: time.Now().Add(-5 * time.Second)}}})
	// What resource-usage reports: 8 of 16 free, on two nodes with 4 each.
	usage := &usagev1alpha1.ResourceUsage{ObjectMeta: metav1.ObjectMeta{Namespace: gpuCluster, Name: usagev1alpha1.ResourceUsageName}}
	testenv.Create(t, c, usage)
	writeStatus(t, c, usage, func(u *usagev1alpha1.ResourceUsage) {
		u.Status = usagev1alpha1.ResourceUsageStatus{ObservedTime: ptr.To(metav1.Now()), ValidUntil: ptr.To(metav1.NewTime(time.Now().Add(time.Hour))), Nodes: 2,
			Resources: []usagev1alpha1.ResourceFigures{{Name: usagev1alpha1.ResourceNvidiaGPU, Model: "NVIDIA-H100-80GB-HBM3",
				Capacity: resource.MustParse("16"), Allocatable: resource.MustParse("16"), Requested: resource.MustParse("8"), Free: resource.MustParse("8"),
				LargestNodeAllocatable: resource.MustParse("8"), FreeNodes: []usagev1alpha1.NodesWithFree{{Free: resource.MustParse("4"), Nodes: 2}}}}}
	})
	placement := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gpu"},
		Spec: clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](1), Tolerations: testenv.NoAgentTolerations(), Predicates: []clusterv1beta1.ClusterPredicate{{
			RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"gpu": "h100"}}}}}}}
	testenv.Create(t, c, placement)
	work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: gpuCluster, Name: "train"},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
			{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ml"}}`)}}}}}}
	testenv.Create(t, c, work)
	writeStatus(t, c, work, func(w *workv1.ManifestWork) {
		w.Status.Conditions = []metav1.Condition{
			{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, Reason: "AppliedManifestWorkComplete", LastTransitionTime: metav1.Now()},
			{Type: workv1.WorkAvailable, Status: metav1.ConditionTrue, Reason: "ResourcesAvailable", LastTransitionTime: metav1.Now()},
		}
	})
	env.StartHub(t, testenv.TestHubOptions())

	kubeconfig := env.Hub.Kubeconfig
	reader := serve(t, "--kubeconfig", kubeconfig)
	writer := serveHTTP(t, "--kubeconfig", kubeconfig, "--allow-writes")

	t.Run("tools: the write tools only with --allow-writes", func(t *testing.T) {
		if diff := cmp.Diff(sorted(mcpserver.ReadTools), tools(t, reader)); diff != "" {
			t.Errorf("tools over stdio without --allow-writes (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(sorted(mcpserver.ReadTools, mcpserver.WriteTools), tools(t, writer)); diff != "" {
			t.Errorf("tools over HTTP with --allow-writes (-want +got):\n%s", diff)
		}
	})

	t.Run("writes are refused without --allow-writes", func(t *testing.T) {
		for _, tool := range mcpserver.WriteTools {
			_, err := reader.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"namespace": ns, "name": "gpu", "numberOfClusters": 2}})
			if err == nil || !strings.Contains(err.Error(), `unknown tool "`+tool+`"`) {
				t.Errorf("%s without --allow-writes: %v, want an unknown tool error", tool, err)
			}
		}
		p := &clusterv1beta1.Placement{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(placement), p); err != nil {
			t.Fatal(err)
		}
		if got := ptr.Deref(p.Spec.NumberOfClusters, -1); got != 1 {
			t.Errorf("numberOfClusters %d after the refused patch, want 1", got)
		}
	})

	t.Run("list_clusters", func(t *testing.T) {
		var out mcpserver.ClustersOutput
		call(t, reader, "list_clusters", map[string]any{"names": []string{gpuCluster, cpuCluster}}, &out)
		if len(out.Clusters) != 2 || len(out.Notes) != 0 {
			t.Fatalf("clusters %+v, notes %v: want 2 clusters, no notes", out.Clusters, out.Notes)
		}
		got := out.Clusters[slices.IndexFunc(out.Clusters, func(c mcpserver.Cluster) bool { return c.Name == gpuCluster })]
		if got.Available != "True" || !slices.Contains(got.Sets, set) || got.Labels["gpu"] != "h100" ||
			!cmp.Equal(got.GPUs, map[string]int64{"NVIDIA-H100-80GB-HBM3": 16}) {
			t.Errorf("cluster %+v: want Available, in set %s, labeled gpu=h100, with 16 H100s", got, set)
		}
		if got.LeaseRenewedSecondsAgo == nil || *got.LeaseRenewedSecondsAgo < 5 || *got.LeaseRenewedSecondsAgo > 120 {
			t.Errorf("heartbeat %v seconds ago, want the lease's age (renewed 5 s before the test read it)", got.LeaseRenewedSecondsAgo)
		}
		sel := toolError(t, reader, "list_clusters", map[string]any{"names": []string{"no-such-cluster"}})
		if !strings.Contains(sel, `the hub has no cluster "no-such-cluster"`) {
			t.Errorf("a missing cluster: %q, want it named", sel)
		}
	})

	t.Run("gpu_capacity", func(t *testing.T) {
		var out mcpserver.GPUsOutput
		call(t, reader, "gpu_capacity", map[string]any{"cluster": gpuCluster}, &out)
		want := []mcpserver.ModelGPUs{{Model: "NVIDIA-H100-80GB-HBM3", Allocatable: 16, Figures: &mcpserver.Figures{
			Capacity: 16, Allocatable: 16, Requested: 8, Free: 8, LargestNodeAllocatable: 8, MostFreeOnANode: 4, FreeNodes: []mcpserver.FreeNodes{{Free: 4, Nodes: 2}}}}}
		if len(out.Clusters) != 1 || out.Clusters[0].Usage != "current" {
			t.Fatalf("clusters %+v: want %s with current figures", out.Clusters, gpuCluster)
		}
		if diff := cmp.Diff(want, out.Clusters[0].Models); diff != "" {
			t.Errorf("models of %s (-want +got):\n%s", gpuCluster, diff)
		}
	})

	t.Run("list_placements: decisions as the hub made them", func(t *testing.T) {
		testenv.WaitFor(t, wait, "the hub to decide the placement", func(context.Context) (bool, string, error) {
			var out mcpserver.PlacementsOutput
			call(t, reader, "list_placements", map[string]any{"namespace": ns}, &out)
			if len(out.Placements) != 1 {
				return false, "", nil
			}
			p := out.Placements[0]
			ok := p.Name == "gpu" && p.Selected == 1 && len(p.Decisions) == 1 && p.Decisions[0].Cluster == gpuCluster && p.Decisions[0].Reason != ""
			return ok, mustJSON(p), nil
		})
	})

	t.Run("explain_placement: what flotilla explain computes", func(t *testing.T) {
		var out mcpserver.ExplainOutput
		call(t, reader, "explain_placement", map[string]any{"namespace": ns, "name": "gpu"}, &out)
		e, err := placementview.Compute(ctx, c, clock.RealClock{}, ns, "gpu")
		if err != nil {
			t.Fatal(err)
		}
		want := placementview.NewOutput(ns, "gpu", &e.Result)
		if diff := cmp.Diff(roundTrip(t, want), out.Explanation, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")); diff != "" {
			t.Errorf("explanation (-flotilla explain +mcp):\n%s", diff)
		}
		filtered := slices.IndexFunc(out.Explanation.Clusters, func(c placementview.ClusterOutput) bool { return c.Name == cpuCluster })
		if filtered < 0 || out.Explanation.Clusters[filtered].FilteredBy == "" {
			t.Errorf("clusters %+v: want %s filtered", out.Explanation.Clusters, cpuCluster)
		}
		if msg := toolError(t, reader, "explain_placement", map[string]any{"namespace": ns, "name": "nope"}); !strings.Contains(msg, `no placement "nope" in namespace `+ns) {
			t.Errorf("a missing placement: %q", msg)
		}
	})

	whatIf := "apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\nmetadata: {name: cpu-what-if}\nspec:\n" +
		"  predicates:\n  - requiredClusterSelector:\n      labelSelector:\n        matchExpressions: [{key: gpu, operator: DoesNotExist}]\n" +
		"  tolerations:\n  - {key: cluster.open-cluster-management.io/unreachable, operator: Exists}\n  - {key: cluster.open-cluster-management.io/unavailable, operator: Exists}\n"
	t.Run("placement_simulate against the live fleet creates nothing", func(t *testing.T) {
		var out mcpserver.SimulateOutput
		call(t, reader, "placement_simulate", map[string]any{"namespace": ns, "placements": whatIf}, &out)
		if len(out.Results) != 1 || len(out.Results[0].Decisions) != 1 || out.Results[0].Decisions[0].ClusterName != cpuCluster {
			t.Errorf("what-if %s, want only %s", mustJSON(out), cpuCluster)
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cpu-what-if"}, &clusterv1beta1.Placement{}); !apierrors.IsNotFound(err) {
			t.Errorf("placement cpu-what-if after the simulation: %v, want not found", err)
		}
		fleet := "apiVersion: cluster.open-cluster-management.io/v1\nkind: ManagedCluster\nmetadata: {name: paper}\n"
		call(t, reader, "placement_simulate", map[string]any{"placements": whatIf, "fleet": fleet}, &out)
		// No set is bound in the given fleet: nothing is eligible.
		if len(out.Results) != 1 || len(out.Results[0].Decisions) != 0 || out.Fleet != "the fleet argument" {
			t.Errorf("what-if on the given fleet %s: want no decision", mustJSON(out))
		}
	})

	t.Run("list_manifestworks", func(t *testing.T) {
		var out mcpserver.WorksOutput
		call(t, reader, "list_manifestworks", map[string]any{"cluster": gpuCluster}, &out)
		want := mcpserver.WorksOutput{
			Clusters: []mcpserver.ClusterWorks{{Cluster: gpuCluster, Works: 1, Applied: 1, Available: 1}},
			Works:    []mcpserver.Work{{Cluster: gpuCluster, Name: "train", Manifests: 1, Applied: "True", Available: "True"}},
		}
		if diff := cmp.Diff(want, out); diff != "" {
			t.Errorf("works (-want +got):\n%s", diff)
		}
	})

	t.Run("kueue_workloads: not served, then served", func(t *testing.T) {
		var out mcpserver.KueueOutput
		call(t, reader, "kueue_workloads", map[string]any{"allNamespaces": true}, &out)
		if out.Served || !strings.Contains(out.Message, "Kueue is not installed on the hub") || len(out.Workloads) != 0 {
			t.Fatalf("without Kueue's CRDs: %s, want served false saying Kueue is not installed", mustJSON(out))
		}
		env.InstallKueueCRDs(t)
		wl := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
			"metadata": map[string]any{"namespace": ns, "name": "job-train"},
			"spec": map[string]any{"queueName": "gpu", "podSets": []any{map[string]any{"name": "main", "count": int64(2),
				"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "trainer"}}}}}}},
		}}
		testenv.WaitFor(t, wait, "Kueue's Workload CRD to be served", func(ctx context.Context) (bool, string, error) {
			err := c.Create(ctx, wl)
			return err == nil, errString(err), nil
		})
		t.Cleanup(func() { _ = c.Delete(context.Background(), wl) })
		testenv.WaitFor(t, wait, "kueue_workloads to list the Workload", func(context.Context) (bool, string, error) {
			call(t, reader, "kueue_workloads", map[string]any{"namespace": ns}, &out)
			ok := out.Served && out.APIVersion == "kueue.x-k8s.io/v1beta2" && len(out.Workloads) == 1 && out.Workloads[0].Name == "job-train" &&
				out.Workloads[0].Queue == "gpu" && cmp.Equal(out.Workloads[0].PodSets, []mcpserver.PodSet{{Name: "main", Count: 2}})
			return ok, mustJSON(out), nil
		})
	})

	t.Run("patch_placement: the hub's validation errors, then a change", func(t *testing.T) {
		msg := toolError(t, writer, "patch_placement", map[string]any{"namespace": ns, "name": "gpu", "numberOfClusters": -1})
		t.Logf("numberOfClusters -1: %s", msg)
		if !strings.Contains(msg, "spec.numberOfClusters") || !strings.Contains(msg, "refused it as invalid") {
			t.Errorf("numberOfClusters -1: %q, want the hub's message naming spec.numberOfClusters", msg)
		}
		msg = toolError(t, writer, "patch_placement", map[string]any{"namespace": ns, "name": "gpu", "prioritizerPolicy": map[string]any{"modee": "Exact"}})
		t.Logf("an unknown field: %s", msg)
		if !strings.Contains(msg, `strict decoding error: unknown field "spec.prioritizerPolicy.modee"`) || strings.Contains(msg, "managedFields") {
			t.Errorf("an unknown field: %q, want it named, without the whole object", msg)
		}
		var out mcpserver.PatchPlacementOutput
		call(t, writer, "patch_placement", map[string]any{"namespace": ns, "name": "gpu", "numberOfClusters": 2, "predicates": []any{}, "dryRun": true}, &out)
		p := &clusterv1beta1.Placement{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(placement), p); err != nil {
			t.Fatal(err)
		}
		if ptr.Deref(p.Spec.NumberOfClusters, -1) != 1 || len(p.Spec.Predicates) != 1 {
			t.Errorf("spec after a dry run: %+v, want it unchanged", p.Spec)
		}
		call(t, writer, "patch_placement", map[string]any{"namespace": ns, "name": "gpu", "numberOfClusters": 2, "predicates": []any{}}, &out)
		if out.Spec["numberOfClusters"] != float64(2) || out.DryRun {
			t.Errorf("answer %s, want numberOfClusters 2", mustJSON(out))
		}
		testenv.WaitFor(t, wait, "the hub to decide both clusters", func(context.Context) (bool, string, error) {
			var pl mcpserver.PlacementsOutput
			call(t, writer, "list_placements", map[string]any{"namespace": ns, "name": "gpu"}, &pl)
			var got []string
			for _, d := range pl.Placements[0].Decisions {
				got = append(got, d.Cluster)
			}
			slices.Sort(got)
			return cmp.Equal(got, sorted([]string{gpuCluster, cpuCluster})), mustJSON(pl), nil
		})
	})

	t.Run("set_addon_placement_score creates, then updates", func(t *testing.T) {
		var out mcpserver.ScoreOutput
		args := map[string]any{"cluster": gpuCluster, "name": "mcp-score", "scores": []any{map[string]any{"name": "gpuFree", "value": 42}}, "validForSeconds": 3600}
		call(t, writer, "set_addon_placement_score", args, &out)
		if !out.Created {
			t.Errorf("first call %s: want created", mustJSON(out))
		}
		args["scores"] = []any{map[string]any{"name": "gpuFree", "value": -7}, map[string]any{"name": "other", "value": 100}}
		call(t, writer, "set_addon_placement_score", args, &out)
		if out.Created {
			t.Errorf("second call %s: want an update", mustJSON(out))
		}
		s := &clusterv1alpha1.AddOnPlacementScore{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: gpuCluster, Name: "mcp-score"}, s); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), s) })
		want := []clusterv1alpha1.AddOnPlacementScoreItem{{Name: "gpuFree", Value: -7}, {Name: "other", Value: 100}}
		if diff := cmp.Diff(want, s.Status.Scores); diff != "" || s.Status.ValidUntil == nil || time.Until(s.Status.ValidUntil.Time) < 50*time.Minute {
			t.Errorf("scores (-want +got):\n%s\nvalidUntil %v, want about an hour from now", diff, s.Status.ValidUntil)
		}
		if msg := toolError(t, writer, "set_addon_placement_score", map[string]any{"cluster": "no-such-cluster", "name": "s",
			"scores": []any{map[string]any{"name": "a", "value": 1}}}); !strings.Contains(msg, `argument "cluster"`) {
			t.Errorf("a cluster without a namespace: %q, want the argument named", msg)
		}
	})

	t.Run("an identity without rights gets permission errors, not data", func(t *testing.T) {
		kc := tokenKubeconfig(t, env, ns, "placement-reader",
			rbacv1.PolicyRule{APIGroups: []string{clusterv1beta1.GroupVersion.Group}, Resources: []string{"placements", "placementdecisions"}, Verbs: []string{"get", "list"}})
		limited := serve(t, "--kubeconfig", kc, "--allow-writes")
		testenv.WaitFor(t, wait, "the reader's RoleBinding to take effect", func(ctx context.Context) (bool, string, error) {
			res, err := limited.CallTool(ctx, &sdk.CallToolParams{Name: "list_placements", Arguments: map[string]any{}})
			if err != nil {
				return false, "", err
			}
			return !res.IsError, text(res), nil
		})
		// Its own namespace (the kubeconfig context's) is readable...
		var out mcpserver.PlacementsOutput
		call(t, limited, "list_placements", map[string]any{}, &out)
		if len(out.Placements) != 1 || out.Placements[0].Namespace != ns {
			t.Errorf("placements %s, want the one in %s", mustJSON(out), ns)
		}
		// ...another namespace, the clusters, works and a write are not.
		for _, tc := range []struct {
			tool string
			args map[string]any
		}{
			{"list_placements", map[string]any{"namespace": gpuCluster}},
			{"list_placements", map[string]any{"allNamespaces": true}},
			{"list_clusters", map[string]any{}},
			{"list_manifestworks", map[string]any{"cluster": gpuCluster}},
			{"explain_placement", map[string]any{"name": "gpu"}}, // the fleet is not readable
			{"patch_placement", map[string]any{"name": "gpu", "numberOfClusters": 1}},
		} {
			msg := toolError(t, limited, tc.tool, tc.args)
			t.Logf("%s %v: %s", tc.tool, tc.args, msg)
			if !strings.Contains(msg, "permission denied") || !strings.Contains(msg, "system:serviceaccount:"+ns+":placement-reader") {
				t.Errorf("%s %v: %q, want a permission error naming the identity", tc.tool, tc.args, msg)
			}
		}
	})
}

func roundTrip(t *testing.T, o placementview.Output) placementview.Output {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var out placementview.Output
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
