package testenv

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla/flotilla/internal/install"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/procruntime"
)

// Options says what fleet a test package needs.
type Options struct {
	// Spokes is the number of spoke clusters, named spoke-1, spoke-2, ...
	Spokes int
	// CRDs installs Flotilla's CRDs (config/crd) on every cluster before the tests run.
	CRDs bool
	// EtcdPerCluster gives each cluster its own etcd (Cluster.Etcd), so that a test can restart
	// the hub's alone.
	EtcdPerCluster bool
	// HubRuntime gives the hub kube-scheduler and a process-runtime node, RuntimeNode, whose pods
	// run as local processes of the test binary (procruntime.NodeRunner, started by Main and
	// stopped before the fleet): Deployments on the hub really run. Without it the hub has no
	// scheduler and no node.
	HubRuntime bool
	// SpokeRuntime gives every spoke a process-runtime node too, beside its kwok nodes.
	SpokeRuntime bool
	// Commands maps images (or repositories) to the local programs the runtime nodes run for
	// them (procruntime.Runtime.Commands). A pod with another image stays Pending.
	Commands map[string]string
	// RuntimeEnv is set in every runtime process (procruntime.Runtime.Env).
	RuntimeEnv map[string]string
	// RuntimeAddresses gives each cluster's runtime node its own loopback address
	// (RuntimeAddress), so that servers of different clusters may use the same port; without it
	// every node is 127.0.0.1.
	RuntimeAddresses bool
}

// Env is a running fleet.
type Env struct {
	Fleet  *localk8s.Fleet
	Hub    *Cluster
	Spokes []*Cluster
	// Dir holds the fleet's certificates, kubeconfigs and logs.
	Dir string
	// Binaries are the Kubernetes binaries the fleet runs.
	Binaries localk8s.Binaries
	opts     Options

	runtimeStops []func()
}

// Cluster is one control plane of the fleet with a ready client.
type Cluster struct {
	*localk8s.Cluster
	Client kubernetes.Interface
	// Runtime runs the pods of the cluster's process-runtime node, RuntimeNode (its PodDir holds
	// their files and logs); nil without one.
	Runtime *procruntime.Runtime
}

// RESTConfig returns a copy of the administrator's client configuration, with client-side rate
// limits raised for tests (client-go's default is 5 requests a second).
func (c *Cluster) RESTConfig() *rest.Config {
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = 100, 200
	return cfg
}

var shared struct {
	env *Env
	err error
}

// KeepLogsEnv names the environment variable that, when set, keeps the fleet's logs after tests
// that passed too (they are always kept after a failure).
const KeepLogsEnv = "FLOTILLA_TESTENV_KEEP_LOGS"

// Main starts the fleet, runs the package's tests and stops the fleet. It returns the exit code
// for os.Exit. If the fleet cannot start, every test would fail, so Main fails at once and says why.
func Main(m *testing.M, opts Options) int {
	defer removeBuilt()
	dir, err := os.MkdirTemp("", "flotilla-testenv-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		return 1
	}
	env, err := startFleet(dir, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: starting the fleet failed; logs are in %s:\n%v\n", dir, err)
		return 1
	}
	shared.env = env

	// Stop the fleet when interrupted; a killed test binary takes its processes with it anyway
	// (parent-death signal, see localk8s).
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		env.stopRuntimes()
		env.Fleet.Stop()
		os.Exit(1)
	}()

	code := m.Run()
	signal.Stop(sigs)
	env.stopRuntimes()
	env.Fleet.Stop()
	switch {
	case code == 0 && os.Getenv(KeepLogsEnv) == "":
		_ = os.RemoveAll(dir)
	case code == 0:
		fmt.Fprintf(os.Stderr, "testenv: the fleet's logs are kept in %s (%s is set)\n", dir, KeepLogsEnv)
	default:
		fmt.Fprintf(os.Stderr, "testenv: tests failed; the fleet's logs are kept in %s\n", dir)
	}
	return code
}

func startFleet(dir string, opts Options) (*Env, error) {
	bins, err := localk8s.FindBinaries()
	if err != nil {
		return nil, err
	}
	var spokes []string
	for i := 1; i <= opts.Spokes; i++ {
		spokes = append(spokes, fmt.Sprintf("spoke-%d", i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	fleet, err := localk8s.StartFleet(ctx, localk8s.FleetOptions{
		Dir: dir, Binaries: bins, Spokes: spokes, HubScheduler: opts.HubRuntime, Progress: os.Stderr, EtcdPerCluster: opts.EtcdPerCluster,
	})
	if err != nil {
		return nil, err
	}
	if opts.CRDs {
		if err := installCRDs(ctx, fleet); err != nil {
			fleet.Stop()
			return nil, err
		}
	}
	env := &Env{Fleet: fleet, Dir: dir, Binaries: bins, opts: opts}
	for _, c := range fleet.Clusters() {
		tc := &Cluster{Cluster: c}
		cs, err := kubernetes.NewForConfig(tc.RESTConfig())
		if err != nil {
			fleet.Stop()
			return nil, err
		}
		tc.Client = cs
		if c.Name == localk8s.HubName {
			env.Hub = tc
		} else {
			env.Spokes = append(env.Spokes, tc)
		}
	}
	if err := env.startRuntimes(ctx, opts); err != nil {
		fleet.Stop()
		return nil, err
	}
	return env, nil
}

// Start returns the package's fleet, started by Main. It fails the test if Main was not called
// from TestMain or started a smaller fleet than opts asks for.
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	env := shared.env
	if env == nil {
		t.Fatalf("testenv.Start: no fleet; call testenv.Main(m, testenv.Options{Spokes: %d}) from TestMain", opts.Spokes)
	}
	if opts.CRDs && !env.opts.CRDs {
		t.Fatalf("testenv.Start: test wants CRDs but TestMain did not install them; set Options.CRDs in TestMain")
	}
	if (opts.HubRuntime && !env.opts.HubRuntime) || (opts.SpokeRuntime && !env.opts.SpokeRuntime) {
		t.Fatalf("testenv.Start: test wants process-runtime nodes (HubRuntime %v, SpokeRuntime %v) that TestMain did not start; set them in TestMain's Options", opts.HubRuntime, opts.SpokeRuntime)
	}
	if opts.Spokes > env.opts.Spokes {
		t.Fatalf("testenv.Start: test wants %d spokes but TestMain started %d; raise Options.Spokes in TestMain", opts.Spokes, env.opts.Spokes)
	}
	if err := env.Fleet.Check(); err != nil {
		t.Fatalf("testenv: the fleet is broken: %v", err)
	}
	return env
}

// Namespace creates a namespace with a name unique to the test on cluster c and deletes it when
// the test ends.
func (e *Env) Namespace(t testing.TB, c *Cluster) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: namespacePrefix(t.Name())}}
	ns, err := c.Client.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a namespace on %s: %v", c.Name, err)
	}
	t.Cleanup(func() {
		_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}

// namespacePrefix turns a test name into a valid, short GenerateName prefix.
func namespacePrefix(testName string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(testName) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	if len(s) > 40 {
		s = s[:40]
	}
	return strings.TrimRight(s, "-") + "-"
}

func installCRDs(ctx context.Context, fleet *localk8s.Fleet) error {
	for _, c := range fleet.Clusters() {
		if _, err := install.Embedded(ctx, c.Config, install.Options{}); err != nil {
			return fmt.Errorf("installing CRDs on %s: %w", c.Name, err)
		}
	}
	return nil
}
