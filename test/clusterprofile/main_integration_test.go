//go:build integration

package clusterprofile

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/hub/clusterprofile"
	"github.com/flotilla/flotilla/internal/hub/clusterset"
	"github.com/flotilla/flotilla/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{CRDs: true})) }

var setLogger sync.Once

// startControllers runs the clusterprofile controller, with the clusterset controllers it relies
// on, in a manager of their own until the test ends.
func startControllers(t *testing.T, env *testenv.Env) {
	t.Helper()
	// One process-wide logger that outlives each test (a testing.T logger must not be used after
	// its test ends, and the manager's goroutines may still log while stopping).
	setLogger.Do(func() {
		ctrl.SetLogger(funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{}))
	})
	mgr, err := ctrl.NewManager(env.Hub.RESTConfig(), ctrl.Options{
		Scheme:                 scheme.Scheme,
		LeaderElection:         false,
		HealthProbeBindAddress: "0",
		Metrics:                metricsserver.Options{BindAddress: "0"},
		// Each test starts its own manager with the same controller names.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.RealClock{}
	for _, r := range []interface{ SetupWithManager(ctrl.Manager) error }{
		&clusterset.SetReconciler{Client: mgr.GetClient(), Clock: clk},
		&clusterset.BindingReconciler{Client: mgr.GetClient(), Clock: clk},
		&clusterset.DefaultLabelReconciler{Client: mgr.GetClient()},
		&clusterset.DefaultSets{Client: mgr.GetClient()},
		&clusterprofile.Reconciler{Client: mgr.GetClient(), Clock: clk},
	} {
		if err := r.SetupWithManager(mgr); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

// hubClient is an uncached client of the hub, so that tests see what the API server holds.
func hubClient(t *testing.T, env *testenv.Env) client.Client {
	t.Helper()
	c, err := client.New(env.Hub.RESTConfig(), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// create creates obj and deletes it when the test ends.
func create(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), obj); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting %T %s: %v", obj, obj.GetName(), err)
		}
	})
}
