//go:build integration

package flowerfleet

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/federatedlearning"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const (
	rounds = 6
	// lostAfter is the round after which spoke-3 is lost.
	lostAfter = 3
)

// TestFederationTrains runs OCM's Flower sample, applied as OCM users write it, in a local fleet
// where Flower really runs: the placement chooses the three spokes that hold data (not spoke-4,
// an edge site without any), the rounds advance in the FederatedLearning's status, one client
// cluster is lost after the third round and the federation goes on with the quorum, and the
// federated model beats every client trained alone on its own data.
func TestFederationTrains(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	data := filepath.Join(f.dir, "data")
	clusters := []string{"spoke-1", "spoke-2", "spoke-3", "spoke-4"}

	f.show(t, "Data stays where it is: spoke-1..3 each hold a skewed data set of their own; spoke-4 (an edge site) holds none")
	f.python(t, "-m", "flotilla_fl.data", "generate", "--out", data, "--clusters", "spoke-1,spoke-2,spoke-3", "--seed", "7")
	for i, c := range clusters[:3] {
		f.claim(t, i, DataClaim, filepath.Join(data, c))
		f.print(t, fmt.Sprintf("  %s: ClusterClaim %s = %s", c, DataClaim, filepath.Join(data, c)))
	}
	// Each agent reports its cluster's claims to the hub on its status period (up to a minute).
	f.waitClaims(t, clusters[:3]...)

	// A Flower ServerApp samples every SuperNode connected to the SuperLink and waits for each
	// one's reply: a SuperNode without a ClientApp (on a cluster the placement does not choose)
	// would stall every round. So flower-addon goes where the data is, as in OCM's sample.
	f.show(t, "flower-addon on the clusters with data (OCM's sample selects clusters by it)")
	for _, c := range clusters[:3] {
		f.enableFlower(t, c)
	}
	f.waitFlowerAvailable(t, clusters[:3]...)
	f.print(t, "  flower-addon is available on "+strings.Join(clusters[:3], ", ")+f.pods(ctx))

	f.show(t, "OCM's Flower sample: a FederatedLearning whose clients go where the data claim is")
	ns := "federated-learning"
	testenv.Create(t, f.c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	fl := &flv1alpha1.FederatedLearning{
		ObjectMeta: metav1.ObjectMeta{Name: "skewed-softmax", Namespace: ns},
		Spec: flv1alpha1.FederatedLearningSpec{
			Framework: flv1alpha1.FrameworkFlower,
			Server:    flv1alpha1.ServerSpec{Image: AppImage, Rounds: rounds, MinAvailableClients: 2},
			Client: flv1alpha1.ClientSpec{Image: AppImage, Placement: clusterv1beta1.PlacementSpec{
				ClusterSets: []string{"default"},
				Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
					ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: DataClaim, Operator: metav1.LabelSelectorOpExists}}},
				}}},
			}},
		},
	}
	m := &measurements{rounds: map[int32]time.Time{}, created: time.Now()}
	testenv.Create(t, f.c, fl)
	cur := f.waitFL(t, fl, "three clients running", func(st *flv1alpha1.FederatedLearningStatus) bool {
		return slices.Equal(clientsIn(st, flv1alpha1.ClientRunning), []string{"spoke-1", "spoke-2", "spoke-3"}) && ready(st, "ServerReady")
	})
	m.clientsRunning = time.Now()
	f.print(t, describe(cur))
	f.waitPods(t, "the federation's SuperLink and ServerApp on the hub, its SuperNode and ClientApp on spoke-1..3", map[string][]string{
		"hub":     {"skewed-softmax-superlink", "skewed-softmax-serverapp"},
		"spoke-1": {"skewed-softmax-supernode", "skewed-softmax-clientapp"}, "spoke-2": {"skewed-softmax-supernode", "skewed-softmax-clientapp"},
		"spoke-3": {"skewed-softmax-supernode", "skewed-softmax-clientapp"}})

	f.waitSuperNodes(t, cur, 3)
	f.show(t, "Submit the example app with flwr run (Flower's CLI, to the federation's own SuperLink, as through kubectl port-forward)")
	model := filepath.Join(f.dir, "model")
	m.submitted, m.cpuStart = time.Now(), f.cpu(t)
	// The run names its FederatedLearning: the hub follows only such a run.
	runID := f.flwrRun(t, cur, fmt.Sprintf(`num-server-rounds=%d min-available-clients=2 test-path=%q output-path=%q %s=%q`,
		rounds, filepath.Join(data, "test"), model, federatedlearning.RunConfigKey, cur.UID))
	f.print(t, fmt.Sprintf("  Flower run %d submitted", runID))

	f.show(t, "The rounds advance in the FederatedLearning's status")
	lost := false
	cur = f.waitFL(t, fl, "training completed", func(st *flv1alpha1.FederatedLearningStatus) bool {
		f.printProgress(t, st)
		if p := st.Progress; p != nil && p.Round >= 1 {
			if _, seen := m.rounds[p.Round]; !seen {
				m.rounds[p.Round] = time.Now()
			}
		}
		if lost && m.lostReported.IsZero() && slices.Contains(clientsIn(st, flv1alpha1.ClientLost), "spoke-3") {
			m.lostReported = time.Now()
		}
		if !lost && st.Progress != nil && st.Progress.Round >= lostAfter {
			lost, m.lost = true, time.Now()
			f.show(t, "spoke-3 is lost (its SuperNode and ClientApp stop): the quorum of 2 holds, training goes on")
			if err := f.c.Delete(ctx, addonOf("spoke-3")); err != nil {
				t.Errorf("losing spoke-3: %v", err)
			}
		}
		return st.Phase == flv1alpha1.PhaseCompleted || st.Phase == flv1alpha1.PhaseFailed
	})
	m.cpuEnd = f.cpu(t)
	f.print(t, describe(cur))
	if cur.Status.Phase != flv1alpha1.PhaseCompleted {
		t.Fatalf("federation ended %s: %s", cur.Status.Phase, cur.Status.Message)
	}

	// Per round, which clusters took part: never spoke-4; spoke-3 until it was lost; at least
	// the quorum in every round.
	if cur.Status.FlowerRunID != strconv.FormatUint(runID, 10) {
		t.Errorf("status.flowerRunID = %q, want the run submitted, %d", cur.Status.FlowerRunID, runID)
	}
	p := cur.Status.Progress
	if p == nil || p.Round != rounds || len(p.RoundClients) != rounds {
		t.Fatalf("progress = %+v, want %d rounds with their clusters", p, rounds)
	}
	for _, rc := range p.RoundClients {
		if slices.Contains(rc.Clusters, "spoke-4") || len(rc.Clusters) < 2 {
			t.Errorf("round %d took updates from %v: want at least 2 clusters, never spoke-4", rc.Round, rc.Clusters)
		}
	}
	if first := p.RoundClients[0].Clusters; !slices.Equal(first, []string{"spoke-1", "spoke-2", "spoke-3"}) {
		t.Errorf("round 1 took updates from %v, want spoke-1..3", first)
	}
	if last := p.RoundClients[rounds-1].Clusters; slices.Contains(last, "spoke-3") {
		t.Errorf("round %d took an update from spoke-3, which was lost before it", rounds)
	}
	if !hasEvent(cur, "ClientLost", "spoke-3") {
		t.Errorf("the timeline does not record spoke-3's loss")
	}
	if _, ok := p.Metrics["accuracy"]; !ok {
		t.Errorf("no aggregated accuracy in the status: %v", p.Metrics)
	}

	f.show(t, "The federated model against each client trained alone on its own data (held-out test set)")
	out := f.python(t, "-m", "flotilla_fl.compare", "--data", data, "--clusters", "spoke-1,spoke-2,spoke-3", "--model", filepath.Join(model, "global_model.npz"))
	f.print(t, out)
	var rows []struct {
		Model    string  `json:"model"`
		Accuracy float64 `json:"accuracy"`
	}
	js := f.python(t, "-m", "flotilla_fl.compare", "--data", data, "--clusters", "spoke-1,spoke-2,spoke-3", "--model", filepath.Join(model, "global_model.npz"), "--json")
	if err := json.Unmarshal([]byte(js), &rows); err != nil || len(rows) != 4 {
		t.Fatalf("compare --json: %v: %s", err, js)
	}
	for _, r := range rows[1:] {
		if rows[0].Accuracy <= r.Accuracy {
			t.Errorf("the federated model (accuracy %.3f) does not beat %s (%.3f)", rows[0].Accuracy, r.Model, r.Accuracy)
		}
	}
	m.report(t, f, lostAfter, p.RoundClients)
}

// waitFL waits until cond holds of fl's status.
func (f *fleet) waitFL(t *testing.T, fl *flv1alpha1.FederatedLearning, what string, cond func(*flv1alpha1.FederatedLearningStatus) bool) *flv1alpha1.FederatedLearning {
	t.Helper()
	cur := &flv1alpha1.FederatedLearning{}
	testenv.WaitFor(t, 5*time.Minute, what, func(ctx context.Context) (bool, string, error) {
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(fl), cur); err != nil {
			return false, "", err
		}
		return cond(&cur.Status), describe(cur) + f.pods(ctx), nil
	})
	return cur
}

// waitPods waits until the named pods (by prefix) run on their clusters' runtime nodes.
func (f *fleet) waitPods(t *testing.T, what string, want map[string][]string) {
	t.Helper()
	testenv.WaitFor(t, wait, what, func(ctx context.Context) (bool, string, error) {
		for _, c := range append([]*testenv.Cluster{f.env.Hub}, f.env.Spokes...) {
			l, err := c.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, "", err
			}
			for _, prefix := range want[c.Name] {
				found := false
				for _, p := range l.Items {
					found = found || (strings.HasPrefix(p.Name, prefix) && p.Status.Phase == corev1.PodRunning && p.Spec.NodeName == testenv.RuntimeNode)
				}
				if !found {
					return false, c.Name + " has no running " + prefix + f.pods(ctx), nil
				}
			}
		}
		return true, "", nil
	})
}

// superLinkPort is the port of fl's own SuperLink, from its status (listener superlink).
func superLinkPort(t *testing.T, fl *flv1alpha1.FederatedLearning) int32 {
	t.Helper()
	for _, l := range fl.Status.Listeners {
		if l.Name == "superlink" && l.Port > 0 {
			return l.Port
		}
	}
	t.Fatalf("FederatedLearning %s/%s reports no SuperLink listener: %+v", fl.Namespace, fl.Name, fl.Status.Listeners)
	return 0
}

// flwrHome writes the Flower CLI's configuration for fl's own SuperLink and returns the folder
// to use as FLWR_HOME. A user reaches the SuperLink through `kubectl port-forward` to its pod's
// loopback, plain HTTP; in a local fleet the pod's loopback is this machine's, so the CLI dials
// 127.0.0.1 and the SuperLink's port (the connection is named after fl).
func (f *fleet) flwrHome(t *testing.T, fl *flv1alpha1.FederatedLearning) string {
	t.Helper()
	home := filepath.Join(f.dir, "flwr-cli-"+fl.Namespace+"-"+fl.Name)
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("[superlink]\ndefault = %q\n\n[superlink.%s]\naddress = \"127.0.0.1:%d\"\ninsecure = true\n", fl.Name, fl.Name, superLinkPort(t, fl))
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// flwr runs Flower's CLI against fl's own SuperLink (connection fl.Name).
func (f *fleet) flwr(t *testing.T, fl *flv1alpha1.FederatedLearning, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(filepath.Join(venv, "bin", "flwr"), args...)
	cmd.Env = append(os.Environ(), "FLWR_HOME="+f.flwrHome(t, fl), "FLWR_TELEMETRY_ENABLED=0", "FLWR_DISABLE_UPDATE_CHECK=1")
	return cmd
}

// waitSuperNodes waits until fl's SuperLink lists want SuperNodes online. A ClientApp pod
// running is not enough: its SuperNode may connect a little later, and the ServerApp samples the
// nodes connected when a round starts, so a run submitted early would have fewer clients in round 1.
func (f *fleet) waitSuperNodes(t *testing.T, fl *flv1alpha1.FederatedLearning, want int) {
	t.Helper()
	testenv.WaitFor(t, wait, fmt.Sprintf("%d SuperNodes online at %s's SuperLink", want, fl.Name), func(context.Context) (bool, string, error) {
		out, err := f.flwr(t, fl, "supernode", "list", fl.Name, "--format", "json").Output()
		if err != nil {
			return false, fmt.Sprintf("flwr supernode list: %v: %s", err, out), nil
		}
		var res struct {
			Nodes []struct {
				Status string `json:"status"`
			} `json:"nodes"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return false, fmt.Sprintf("flwr supernode list answered %s", out), nil
		}
		online := 0
		for _, n := range res.Nodes {
			if n.Status == "online" {
				online++
			}
		}
		return online >= want, fmt.Sprintf("%d online: %s", online, out), nil
	})
}

// flwrRun submits the example app to fl's own SuperLink with Flower's CLI and returns the run.
func (f *fleet) flwrRun(t *testing.T, fl *flv1alpha1.FederatedLearning, runConfig string) uint64 {
	t.Helper()
	app, err := filepath.Abs("../../examples/federated-learning")
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.flwr(t, fl, "run", app, fl.Name, "--format", "json", "--run-config", runConfig).Output()
	if err != nil {
		t.Fatalf("flwr run: %v\n%s", err, out)
	}
	var res struct {
		Success bool   `json:"success"`
		RunID   uint64 `json:"run-id,string"` // Flower prints it as a string
	}
	if err := json.Unmarshal(out, &res); err != nil || !res.Success {
		t.Fatalf("flwr run answered %s (%v)", out, err)
	}
	return res.RunID
}

// printProgress prints each newly aggregated round once.
func (f *fleet) printProgress(t *testing.T, st *flv1alpha1.FederatedLearningStatus) {
	p := st.Progress
	if p == nil {
		return
	}
	for _, rc := range p.RoundClients {
		if rc.Round <= f.lastRound {
			continue
		}
		f.lastRound = rc.Round
		var metrics []string
		if rc.Round == p.Round {
			for _, k := range sortedKeys(p.Metrics) {
				metrics = append(metrics, k+"="+p.Metrics[k])
			}
		}
		f.print(t, fmt.Sprintf("  round %d of %d aggregated, updates from %s  %s", rc.Round, p.Rounds, strings.Join(rc.Clusters, ", "), strings.Join(metrics, " ")))
	}
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func clientsIn(st *flv1alpha1.FederatedLearningStatus, state flv1alpha1.ClientState) []string {
	var out []string
	for _, c := range st.Clients {
		if c.State == state {
			out = append(out, c.Cluster)
		}
	}
	return out
}

func ready(st *flv1alpha1.FederatedLearningStatus, typ string) bool {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

func hasEvent(fl *flv1alpha1.FederatedLearning, event, cluster string) bool {
	for _, e := range fl.Status.Timeline {
		if e.Event == event && e.Cluster == cluster {
			return true
		}
	}
	return false
}

func describe(fl *flv1alpha1.FederatedLearning) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  FederatedLearning %s: %s: %s\n", fl.Name, fl.Status.Phase, fl.Status.Message)
	for _, c := range fl.Status.Conditions {
		fmt.Fprintf(&b, "    %-13s %-6s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	for _, c := range fl.Status.Clients {
		fmt.Fprintf(&b, "    client %-8s %-8s %s\n", c.Cluster, c.State, c.Reason)
	}
	for _, e := range fl.Status.Timeline {
		fmt.Fprintf(&b, "    %s %-16s %-8s %s\n", e.Time.Format("15:04:05"), e.Event, e.Cluster, e.Message)
	}
	return b.String()
}

// waitClaims waits until the hub has each cluster's data claim, as its agent reports it.
func (f *fleet) waitClaims(t *testing.T, clusters ...string) {
	t.Helper()
	testenv.WaitFor(t, wait, fmt.Sprintf("the agents of %v to report the data claim", clusters), func(ctx context.Context) (bool, string, error) {
		for _, c := range clusters {
			mc := &clusterv1.ManagedCluster{}
			if err := f.c.Get(ctx, client.ObjectKey{Name: c}, mc); err != nil {
				return false, "", err
			}
			if !slices.ContainsFunc(mc.Status.ClusterClaims, func(cl clusterv1.ManagedClusterClaim) bool { return cl.Name == DataClaim }) {
				return false, c + " has not reported it yet", nil
			}
		}
		return true, "", nil
	})
}
