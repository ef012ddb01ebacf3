//go:build integration

package registration

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentreg "github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/hub"
	hubreg "github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{Spokes: 3, CRDs: true})) }

// offsetClock is the real clock, moved forward by a test to bring a certificate renewal near.
type offsetClock struct {
	clock.RealClock
	offset atomic.Int64
}

func (c *offsetClock) Now() time.Time { return c.RealClock.Now().Add(time.Duration(c.offset.Load())) }

// startHub runs the hub's controllers until stop is called or the test ends.
func startHub(t *testing.T, env *testenv.Env) (stop func()) {
	t.Helper()
	return startHubWith(t, env, nil)
}

// startHubWith is startHub with options changed by mutate (nil changes nothing).
func startHubWith(t *testing.T, env *testenv.Env, mutate func(*hub.Options)) (stop func()) {
	t.Helper()
	opts := testenv.TestHubOptions()
	if mutate != nil {
		mutate(&opts)
	}
	return env.StartHub(t, opts)
}

// bootstrapConfig creates the bootstrap identity and returns a client configuration that uses it.
func bootstrapConfig(t *testing.T, env *testenv.Env) *rest.Config {
	t.Helper()
	ctx := context.Background()
	if err := hubreg.EnsureBootstrapIdentity(ctx, env.Hub.Client); err != nil {
		t.Fatal(err)
	}
	data, err := hubreg.BootstrapKubeconfig(ctx, env.Hub.Client, env.Hub.RESTConfig(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// runAgent runs an agent until the returned stop is called or the test ends.
func runAgent(t *testing.T, opts agentreg.Options) (stop func()) {
	t.Helper()
	if opts.Poll == 0 {
		opts.Poll = 200 * time.Millisecond
	}
	if opts.Log.GetSink() == nil {
		opts.Log = testr.New(t)
	}
	a, err := agentreg.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := a.Run(ctx); err != nil && ctx.Err() == nil {
			t.Errorf("agent of %s stopped: %v", opts.ClusterName, err)
		}
	}()
	var stopped atomic.Bool
	stop = func() {
		if stopped.CompareAndSwap(false, true) {
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return stop
}

func hubClient(t *testing.T, env *testenv.Env) client.Client { return env.HubClient(t) }

// agentConfig reads the hub kubeconfig the agent stored on its spoke.
func agentConfig(t *testing.T, spoke kubernetes.Interface) *rest.Config {
	t.Helper()
	s, err := spoke.CoreV1().Secrets(agentreg.DefaultNamespace).Get(context.Background(), agentreg.DefaultSecretName, metav1GetOptions)
	if err != nil {
		t.Fatalf("reading the agent's hub kubeconfig Secret: %v", err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data[agentreg.KubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
