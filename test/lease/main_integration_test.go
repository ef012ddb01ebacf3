//go:build integration

package lease

import (
	"os"
	"testing"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/internal/hub/lease"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{CRDs: true})) }

// startControllers runs the lease and taint reconcilers on the hub, with the real clock, until
// the test ends. The registration controller does not run: tests create namespaces and leases.
func startControllers(t *testing.T, env *testenv.Env) {
	t.Helper()
	env.StartControllers(t, func(mgr ctrl.Manager) []testenv.Controller {
		clk := clock.RealClock{}
		return []testenv.Controller{
			&lease.Reconciler{Client: mgr.GetClient(), Clock: clk},
			&lease.TaintReconciler{Client: mgr.GetClient(), Clock: clk},
		}
	})
}

func hubClient(t *testing.T, env *testenv.Env) client.Client { return env.HubClient(t) }
