//go:build integration

package lease

import (
	"context"
	"os"
	"testing"

	"github.com/go-logr/logr/testr"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/hub/lease"
	"github.com/flotilla/flotilla/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{CRDs: true})) }

// startControllers runs the lease and taint reconcilers on the hub, with the real clock, until
// the test ends. The registration controller does not run: tests create namespaces and leases.
func startControllers(t *testing.T, env *testenv.Env) {
	t.Helper()
	ctrl.SetLogger(testr.New(t))
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
		&lease.Reconciler{Client: mgr.GetClient(), Clock: clk},
		&lease.TaintReconciler{Client: mgr.GetClient(), Clock: clk},
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

func hubClient(t *testing.T, env *testenv.Env) client.Client {
	t.Helper()
	c, err := client.New(env.Hub.RESTConfig(), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
