//go:build integration

package multikueue

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/go-logr/logr/testr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/agent/addon"
	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/agent/builtin/kueuequeues"
	"github.com/flotilla/flotilla/internal/agent/builtin/managedserviceaccount"
	"github.com/flotilla/flotilla/internal/agent/builtin/multikueueworker"
	"github.com/flotilla/flotilla/internal/agent/builtin/resourceusage"
	"github.com/flotilla/flotilla/internal/agent/work"
	"github.com/flotilla/flotilla/internal/hub/kueue"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{}))
	os.Exit(testenv.Main(m, testenv.Options{Spokes: 2, CRDs: true}))
}

const (
	ns   = kueue.DefaultNamespace
	wait = 60 * time.Second
)

// fleet is a hub running as its generated roles plus the Kueue namespace Role, and its spokes,
// joined, each with work and add-on agents running the built-in add-ons.
type fleet struct {
	env    *testenv.Env
	c      client.Client
	joined []*testenv.Joined
}

// workerLostTimeout is the hub Kueue's multiKueue.workerLostTimeout in these tests, and
// leaseSeconds the clusters' lease period.
const (
	workerLostTimeout = 20 * time.Second
	leaseSeconds      = 5
)

// startFleet runs Kueue's manager on the hub (a MultiKueue manager handing the choice of workers
// to the hub's dispatcher) and on the spokes, starts the hub and joins the spokes with their
// agents; source is where MultiKueue takes the workers' credentials from, builtIns gives each
// spoke's built-in add-ons.
func startFleet(t *testing.T, clk clock.WithTicker, source kueue.Source, builtIns func() []builtin.AddOn) *fleet {
	t.Helper()
	env := testenv.Start(t, testenv.Options{Spokes: 2, CRDs: true})
	env.StartKueue(t, &localk8s.MultiKueueOptions{DispatcherName: kueue.DispatcherName, WorkerLostTimeout: workerLostTimeout, FairSharing: true,
		CredentialsPlugin: env.KueuePlugin(t)})
	opts := testenv.TestHubOptions()
	opts.KueueCredentials = source
	opts.KueueTokenResync = time.Second
	opts.KueueDispatcher = true
	env.StartKueueHub(t, opts)
	c := env.HubClient(t)
	f := &fleet{env: env, c: c, joined: env.JoinSpokes(t)}
	// Fast failover is the administrator's choice of a short lease: the agent reports every
	// period whether its API server answers, and a silent cluster is lost after five.
	for _, j := range f.joined {
		f.leaseSeconds(t, j.Name, leaseSeconds)
	}
	for _, j := range f.joined {
		w, err := work.New(work.Options{ClusterName: j.Name, AgentID: "agent-" + j.Name, Hub: j.Agent.Hub(), Spoke: j.Spoke.RESTConfig(),
			Log: testr.New(t).WithName("work-" + j.Name)})
		if err != nil {
			t.Fatal(err)
		}
		testenv.RunUntilCleanup(t, w.Run)
		ad, err := addon.New(addon.Options{
			ClusterName: j.Name, AgentID: "agent-" + j.Name, Hub: j.Agent.Hub(), Spoke: j.Spoke.RESTConfig(),
			BuiltIns:       builtin.NewManager(j.Name, j.Spoke.RESTConfig(), clk, testr.New(t).WithName("builtin-"+j.Name), builtIns()...),
			InitialBackoff: 200 * time.Millisecond, MaxBackoff: 2 * time.Second,
			Log: testr.New(t).WithName("addon-" + j.Name),
		})
		if err != nil {
			t.Fatal(err)
		}
		testenv.RunUntilCleanup(t, ad.Run)
	}
	return f
}

// workerAddOns are the built-in add-ons a MultiKueue worker runs in these tests.
func workerAddOns() []builtin.AddOn {
	return []builtin.AddOn{multikueueworker.AddOn{Check: 200 * time.Millisecond}, managedserviceaccount.AddOn{},
		kueuequeues.AddOn{Debounce: 200 * time.Millisecond}, resourceusage.AddOn{Interval: 5 * time.Second, Debounce: 200 * time.Millisecond}}
}

// TestMultiKueue runs the tests that share one fleet: a hub and two spokes with Kueue and their
// agents, MultiKueue reaching the workers through their ClusterProfiles (the hub's default).
func TestMultiKueue(t *testing.T) {
	clk := runningClock(t)
	f := startFleet(t, clk, kueue.SourceClusterProfile, workerAddOns)
	t.Run("credentials", func(t *testing.T) { testProfileCredentials(t, f) })
	t.Run("dispatch", func(t *testing.T) { testDispatch(t, f) })
}

// TestMultiKueueSecrets runs the credentials tests on the Secret path (--kueue-credentials
// secret, for Kueue versions without clusterProfileRef), and one job through it, on a fleet of
// its own.
func TestMultiKueueSecrets(t *testing.T) {
	clk := runningClock(t)
	f := startFleet(t, clk, kueue.SourceSecret, workerAddOns)
	t.Run("credentials", func(t *testing.T) { testCredentials(t, f, clk) })
}

// bindSet puts every joined cluster in a new cluster set bound into the Kueue namespace, labels
// each with its labels, and removes it all when the test ends.
func (f *fleet) bindSet(t *testing.T, set string, labels map[string]map[string]string) {
	t.Helper()
	testenv.Create(t, f.c, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel}}})
	testenv.Create(t, f.c, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: set, Namespace: ns},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set}})
	for _, j := range f.joined {
		l := map[string]string{clusterv1beta2.ClusterSetLabel: set}
		for k, v := range labels[j.Name] {
			l[k] = v
		}
		f.label(t, j.Name, l)
	}
}
