//go:build integration

package clusterprofile

import (
	"os"
	"testing"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/internal/hub/clusterprofile"
	"github.com/flotilla/flotilla/internal/hub/clusterset"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{CRDs: true})) }

// startControllers runs the clusterprofile controller, with the clusterset controllers it relies
// on, in a manager of their own until the test ends.
func startControllers(t *testing.T, env *testenv.Env) {
	t.Helper()
	env.StartControllers(t, func(mgr ctrl.Manager) []testenv.Controller {
		clk := clock.RealClock{}
		return []testenv.Controller{
			&clusterset.SetReconciler{Client: mgr.GetClient(), Clock: clk},
			&clusterset.BindingReconciler{Client: mgr.GetClient(), Clock: clk},
			&clusterset.DefaultLabelReconciler{Client: mgr.GetClient()},
			&clusterset.DefaultSets{Client: mgr.GetClient()},
			// The test's "clusters" are served on loopback.
			&clusterprofile.Reconciler{Client: mgr.GetClient(), Clock: clk, AllowLocal: true},
		}
	})
}

func hubClient(t *testing.T, env *testenv.Env) client.Client { return env.HubClient(t) }

// create creates obj and deletes it when the test ends.
func create(t *testing.T, c client.Client, obj client.Object) { testenv.Create(t, c, obj) }
