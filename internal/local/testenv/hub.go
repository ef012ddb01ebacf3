package testenv

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla/flotilla/internal/hub"
	"github.com/flotilla/flotilla/internal/hub/webhook"
)

// TestHubOptions are the hub's options for a test: every controller, no leader election, no
// probes or metrics, no webhook or explanation server, and controller names that may repeat
// (each test starts its own hub in the same process).
func TestHubOptions() hub.Options {
	opts := hub.DefaultOptions()
	opts.LeaderElection, opts.HealthProbeAddress, opts.MetricsAddress = false, "0", "0"
	opts.SkipNameValidation = true
	// Tests' scorers and Prometheus listen on loopback.
	opts.DynamicScoringAllowLocal = true
	// Tests' spokes too.
	opts.ClusterProfileAllowLocal = true
	return opts
}

// StartHub runs the hub's manager with opts in the test process, as the hub's generated roles
// (with the Role in its namespace, opts.LeaderElectionNamespace) and nothing more (HubIdentity,
// so every test that uses it also shows the roles are enough), until stop is called or the test
// ends.
func (e *Env) StartHub(t testing.TB, opts hub.Options) (stop func()) {
	t.Helper()
	useProcessLogger()
	mgr, err := hub.NewManager(e.HubIdentity(t, opts.LeaderElectionNamespace), opts)
	if err != nil {
		t.Fatal(err)
	}
	return run(t, mgr)
}

// DeleteWebhookConfigurationAtEnd deletes the hub's admission webhook configuration when the
// test ends. The configuration outlives the hub and refuses writes while nothing answers, so a
// test that starts a hub with its webhook calls this first: cleanups run last-in first-out, so
// it runs after the hub has stopped and the package's other tests can write again.
func (e *Env) DeleteWebhookConfigurationAtEnd(t testing.TB) {
	t.Helper()
	t.Cleanup(func() {
		err := e.Hub.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), webhook.ConfigurationName, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting the webhook configuration: %v", err)
		}
	})
}
