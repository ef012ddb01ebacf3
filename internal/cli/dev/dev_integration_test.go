//go:build integration

package dev_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/cli"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/local/devfleet"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

const smallFleet = `apiVersion: dev.flotilla.io/v1alpha1
kind: Fleet
clusters:
- name: spoke-a
  labels: {region: test}
  claims: {region.open-cluster-management.io: test-1}
  nodePools:
  - name: l4
    count: 1
    gpu: {model: NVIDIA-L4, count: 2}
`

// run runs one flotilla command in-process and returns what it printed.
func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	io, out, errOut := streams.Buffers()
	cmd := cli.NewRootCommand(io, clock.RealClock{})
	cmd.SetArgs(args)
	err = cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func TestUpStatusDownRoundTrip(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	fleetFile := filepath.Join(dir, "fleet.yaml")
	if err := os.WriteFile(fleetFile, []byte(smallFleet), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _, _ = run(t, "dev", "down", "--state-dir", stateDir) })
	flotilla := buildFlotilla(t, dir)
	// up starts the binaries by relative paths through symbolic links; status and down run from
	// another folder, and still find the processes.
	bins, err := localk8s.FindBinaries()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "links"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"k8s": bins.Dir, "flotilla": flotilla} {
		if err := os.Symlink(target, filepath.Join(dir, "links", link)); err != nil {
			t.Fatal(err)
		}
	}
	// A file of the user's in the state folder: down keeps it.
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stateDir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	out, progress, err := run(t, "dev", "up", "-f", "fleet.yaml", "--state-dir", stateDir,
		"--flotilla-bin", filepath.Join("links", "flotilla"), "--k8s-bin", filepath.Join("links", "k8s"))
	if err != nil {
		t.Fatalf("dev up: %v\n%s", err, progress)
	}
	t.Chdir(t.TempDir())
	for _, want := range []string{"hub", "spoke-a", "admin.kubeconfig", "registered with the Flotilla hub", "flotilla dev down"} {
		if !strings.Contains(out, want) {
			t.Errorf("dev up output does not mention %q:\n%s", want, out)
		}
	}
	st, err := devfleet.Load(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Processes {
		if resolved, err := filepath.EvalSymlinks(p.Binary); err != nil || resolved != p.Binary || !filepath.IsAbs(p.Binary) {
			t.Errorf("%s/%s: recorded binary %q is not an absolute path with links resolved (%q, %v)", p.Cluster, p.Component, p.Binary, resolved, err)
		}
	}
	// The OCM CRDs are on the hub and on the spokes.
	for _, c := range st.Clusters {
		cfg, err := localk8s.RESTConfigFromKubeconfig(c.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := apiextclient.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		const name = "managedclustersets.cluster.open-cluster-management.io"
		if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			t.Errorf("%s: CRD %s not installed: %v", c.Name, name, err)
		}
	}

	// The spoke registered with the hub that dev up runs.
	hubCluster, err := st.Cluster("hub")
	if err != nil {
		t.Fatal(err)
	}
	hubCfg, err := localk8s.RESTConfigFromKubeconfig(hubCluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := client.New(hubCfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	mc := &clusterv1.ManagedCluster{}
	if err := hc.Get(context.Background(), client.ObjectKey{Name: "spoke-a"}, mc); err != nil {
		t.Fatalf("ManagedCluster spoke-a on the hub: %v", err)
	}
	for _, c := range []string{clusterv1.ManagedClusterConditionHubAccepted, clusterv1.ManagedClusterConditionJoined, clusterv1.ManagedClusterConditionAvailable} {
		if !meta.IsStatusConditionTrue(mc.Status.Conditions, c) {
			t.Errorf("ManagedCluster spoke-a: %s is not True: %+v", c, mc.Status.Conditions)
		}
	}
	// The fleet file's labels are on the ManagedCluster; its claims reached the hub through the agent.
	if mc.Labels["region"] != "test" {
		t.Errorf("ManagedCluster spoke-a labels = %v, want region=test from the fleet file", mc.Labels)
	}
	claims := map[string]string{}
	for _, cl := range mc.Status.ClusterClaims {
		claims[cl.Name] = cl.Value
	}
	if claims["region.open-cluster-management.io"] != "test-1" || claims[clusterv1.GPUModelsClaim] != "NVIDIA-L4" {
		t.Errorf("ManagedCluster spoke-a claims = %v, want the fleet file's region claim and the L4 GPU model", claims)
	}

	// A second up while the fleet runs says so and starts nothing.
	_, _, err = run(t, "dev", "up", "-f", fleetFile, "--state-dir", stateDir, "--flotilla-bin", flotilla)
	if err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second dev up: err = %v, want one saying a fleet is already running", err)
	}
	if st2, _ := devfleet.Load(stateDir); len(st2.Processes) != len(st.Processes) {
		t.Errorf("second dev up changed the fleet: %d processes, had %d", len(st2.Processes), len(st.Processes))
	}

	out, _, err = run(t, "dev", "status", "-o", "json", "--state-dir", stateDir)
	if err != nil {
		t.Fatalf("dev status: %v\n%s", err, out)
	}
	var r devfleet.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("dev status -o json printed no JSON: %v\n%s", err, out)
	}
	type summary struct {
		Name, Role   string
		Healthy      bool
		Nodes, Procs int
		GPUs         map[string]int64
	}
	var got []summary
	for _, c := range r.Clusters {
		got = append(got, summary{c.Name, c.Role, c.Healthy, c.NodesReady, len(c.Processes), c.GPUs})
	}
	want := []summary{
		{Name: "hub", Role: "hub", Healthy: true, Procs: 3},
		{Name: "spoke-a", Role: "spoke", Healthy: true, Nodes: 1, Procs: 5, GPUs: map[string]int64{"NVIDIA-L4": 2}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dev status (-want +got):\n%s", diff)
	}

	out, _, err = run(t, "dev", "kubeconfig", "spoke-a", "--state-dir", stateDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(strings.TrimSpace(out)); err != nil {
		t.Errorf("dev kubeconfig printed %q, which is not a file: %v", out, err)
	}
	if _, _, err := run(t, "dev", "kubeconfig", "nope", "--state-dir", stateDir); err == nil || !strings.Contains(err.Error(), `no cluster "nope"`) {
		t.Errorf("dev kubeconfig nope: err = %v, want one naming the unknown cluster", err)
	}

	// A crashed API server shows in status, with the log to read.
	var apiserver devfleet.ProcessState
	for _, p := range st.Processes {
		if p.Cluster == "spoke-a" && p.Component == "kube-apiserver" {
			apiserver = p
		}
	}
	if err := syscall.Kill(apiserver.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, apiserver.PID)
	out, _, err = run(t, "dev", "status", "--state-dir", stateDir)
	if err == nil || !strings.Contains(err.Error(), "spoke-a: kube-apiserver (pid "+strconv.Itoa(apiserver.PID)+") is not running") ||
		!strings.Contains(err.Error(), "kube-apiserver.log") {
		t.Errorf("dev status after an API server crash: err = %v, want it to name the process and its log\n%s", err, out)
	}

	out, _, err = run(t, "dev", "down", "--state-dir", stateDir)
	if err != nil {
		t.Fatalf("dev down: %v", err)
	}
	if !strings.Contains(out, "fleet stopped") {
		t.Errorf("dev down printed %q", out)
	}
	for _, p := range st.Processes {
		waitGone(t, p.PID)
	}
	if entries, err := os.ReadDir(stateDir); err != nil || len(entries) != 1 || entries[0].Name() != "notes.txt" {
		t.Errorf("dev down left %v in %s (err %v), want only the user's notes.txt", entries, stateDir, err)
	}
	if _, _, err := run(t, "dev", "status", "--state-dir", stateDir); err == nil || !strings.Contains(err.Error(), "no fleet is running") {
		t.Errorf("dev status after down: err = %v, want 'no fleet is running'", err)
	}
	if out, _, err := run(t, "dev", "down", "--state-dir", stateDir); err != nil || !strings.Contains(out, "no fleet is running") {
		t.Errorf("second dev down: out=%q err=%v, want success saying no fleet runs", out, err)
	}
}

func TestUpRejectsBadFleetFile(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	fleetFile := filepath.Join(dir, "fleet.yaml")
	bad := strings.Replace(smallFleet, "count: 2}", "count: 0}", 1)
	if err := os.WriteFile(fleetFile, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := run(t, "dev", "up", "-f", fleetFile, "--state-dir", stateDir)
	if err == nil || !strings.Contains(err.Error(), "clusters[0].nodePools[0].gpu.count: Invalid value: 0") {
		t.Fatalf("dev up with a bad fleet file: err = %v, want the field and the reason", err)
	}
	if _, err := os.Stat(filepath.Join(stateDir, devfleet.StateFile)); !os.IsNotExist(err) {
		t.Errorf("a rejected fleet file left state behind: %v", err)
	}
}

// buildFlotilla builds the flotilla binary that dev up runs the hub and the agents with.
func buildFlotilla(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "flotilla")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/flotilla")
	cmd.Dir = filepath.Join("..", "..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building flotilla: %v\n%s", err, b)
	}
	return out
}

// waitGone waits until pid no longer exists (or is a zombie).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
