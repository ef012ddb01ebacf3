//go:build integration

package flowerfleet

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/agent/work"
	"github.com/flotilla/flotilla/internal/local/procruntime"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const (
	// DataClaim names where a cluster keeps its training data (OCM's sample's claim).
	DataClaim = "federated-learning-sample.client-data"
	wait      = 3 * time.Minute
)

// fleet is the running local fleet of a test.
type fleet struct {
	env    *testenv.Env
	c      client.Client
	dir    string // the test's own files: data, FLWR_HOME of the CLI, the model
	demo   bool
	hubIP  string
	joined []*testenv.Joined
	// lastRound is the last round printed.
	lastRound int32
}

// start runs the hub (with flower-addon's SuperLink reachable at the hub's runtime address) and
// joins every spoke with its registration and work agents.
func start(t *testing.T) *fleet {
	t.Helper()
	env := testenv.Start(t, testenv.Options{Spokes: 4, CRDs: true, HubRuntime: true, SpokeRuntime: true, RuntimeAddresses: true})
	f := &fleet{env: env, c: env.HubClient(t), dir: t.TempDir(), demo: os.Getenv("FLOTILLA_DEMO") != "", hubIP: testenv.RuntimeAddress(0)}
	opts := testenv.TestHubOptions()
	// The SuperNodes reach the SuperLink at the hub's runtime address; it is also a name of
	// the SuperLink's serving certificate.
	opts.Flower.Address = f.hubIP + ":9092"
	// The hub runs beside its cluster, not in it: Service names resolve as the runtime does.
	opts.ResolveHubService = func(ctx context.Context, hostport string) string {
		m, err := procruntime.ServiceAddresses(ctx, env.Hub.Client, f.hubIP)
		if to, ok := m[hostport]; ok && err == nil {
			return to
		}
		return hostport
	}
	env.StartHub(t, opts)
	f.joined = env.JoinSpokes(t)
	for _, j := range f.joined {
		w, err := work.New(work.Options{
			ClusterName: j.Name, AgentID: "agent-" + j.Name, Hub: j.Agent.Hub(), Spoke: j.Spoke.RESTConfig(),
			Resync: 2 * time.Second, Log: testr.New(t).WithName(j.Name + "-work"),
		})
		if err != nil {
			t.Fatal(err)
		}
		testenv.RunUntilCleanup(t, w.Run)
	}
	return f
}

// show prints a step of the demo (FLOTILLA_DEMO set) or logs it.
func (f *fleet) show(t *testing.T, format string, args ...any) {
	t.Helper()
	if f.demo {
		fmt.Printf("\n\033[1m== "+format+"\033[0m\n", args...)
		return
	}
	t.Logf("== "+format, args...)
}

// print prints demo output (or logs it).
func (f *fleet) print(t *testing.T, text string) {
	t.Helper()
	if f.demo {
		fmt.Println(strings.TrimRight(text, "\n"))
		return
	}
	t.Log(text)
}

// python runs the example's module with the venv's Python, in the example's folder.
func (f *fleet) python(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(venv, "bin", "python"), args...)
	cmd.Dir = "../../examples/federated-learning"
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// claim creates a ClusterClaim on a spoke; its agent reports it to the hub.
func (f *fleet) claim(t *testing.T, spoke int, name, value string) {
	t.Helper()
	c, err := client.New(f.env.Spokes[spoke].RESTConfig(), client.Options{Scheme: f.c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Create(t, c, &clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterClaimSpec{Value: value}})
}

// enableFlower switches flower-addon on for a cluster, as `flotilla addon enable` does.
func (f *fleet) enableFlower(t *testing.T, cluster string) {
	t.Helper()
	testenv.Create(t, f.c, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Name: "flower-addon", Namespace: cluster}})
}

// waitLabels waits until every cluster named has flower-addon available (its SuperNode runs).
func (f *fleet) waitFlowerAvailable(t *testing.T, clusters ...string) {
	t.Helper()
	testenv.WaitFor(t, wait, fmt.Sprintf("flower-addon available on %v", clusters), func(ctx context.Context) (bool, string, error) {
		var missing []string
		for _, c := range clusters {
			mc := &clusterv1.ManagedCluster{}
			if err := f.c.Get(ctx, client.ObjectKey{Name: c}, mc); err != nil {
				return false, "", err
			}
			if v := mc.Labels["feature.open-cluster-management.io/addon-flower-addon"]; v != "available" {
				missing = append(missing, c+"="+v)
			}
		}
		return len(missing) == 0, fmt.Sprintf("not yet: %v; %s", missing, f.pods(ctx)), nil
	})
}

// pods lists the runtime nodes' pods of every cluster with their phase, for failure messages.
func (f *fleet) pods(ctx context.Context) string {
	var b strings.Builder
	for _, c := range append([]*testenv.Cluster{f.env.Hub}, f.env.Spokes...) {
		l, err := c.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, p := range l.Items {
			if p.Spec.NodeName != testenv.RuntimeNode {
				continue
			}
			restarts := int32(0)
			for _, s := range p.Status.ContainerStatuses {
				restarts += s.RestartCount
			}
			fmt.Fprintf(&b, "\n  %s %s/%s %s restarts=%d", c.Name, p.Namespace, p.Name, p.Status.Phase, restarts)
		}
	}
	return b.String()
}

// addonOf is a cluster's flower-addon ManagedClusterAddOn.
func addonOf(cluster string) *addonv1alpha1.ManagedClusterAddOn {
	return &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Name: "flower-addon", Namespace: cluster}}
}
