package testenv

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/flotilla/flotilla/api/scheme"
)

// Controller is what a controller package adds to a manager.
type Controller interface {
	SetupWithManager(ctrl.Manager) error
}

// setLogger gives controller-runtime one process-wide logger that outlives each test: a
// testing.T must not be logged to after its test ends, and a stopping manager's goroutines may
// still log.
var setLogger sync.Once

func useProcessLogger() {
	setLogger.Do(func() {
		ctrl.SetLogger(funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{}))
	})
}

// StartControllers runs the controllers that controllers(mgr) returns in a controller-runtime
// manager on the hub, until stop is called or the test ends. Tests of one package may each start
// their own: controller names may repeat.
func (e *Env) StartControllers(t testing.TB, controllers func(mgr ctrl.Manager) []Controller) (stop func()) {
	t.Helper()
	useProcessLogger()
	mgr, err := ctrl.NewManager(e.Hub.RESTConfig(), ctrl.Options{
		Scheme:                 scheme.Scheme,
		HealthProbeBindAddress: "0",
		Metrics:                metricsserver.Options{BindAddress: "0"},
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range controllers(mgr) {
		if err := c.SetupWithManager(mgr); err != nil {
			t.Fatal(err)
		}
	}
	return run(t, mgr)
}

// run starts mgr until the returned stop is called or the test ends; stop waits for it and
// reports its error.
func run(t testing.TB, mgr ctrl.Manager) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// HubClient is an uncached client of the hub that knows every Flotilla kind, so that tests see
// what the API server holds.
func (e *Env) HubClient(t testing.TB) client.Client {
	t.Helper()
	c, err := client.New(e.Hub.RESTConfig(), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Create creates obj with c and deletes it when the test ends, with what it owns (background
// propagation: a Job's pods go too, which the API's default for Jobs would orphan).
func Create(t testing.TB, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
	t.Cleanup(func() {
		err := c.Delete(context.Background(), obj, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting %T %s: %v", obj, obj.GetName(), err)
		}
	})
}
