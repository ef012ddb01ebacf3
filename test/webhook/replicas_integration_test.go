//go:build integration

package webhook

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flotilla/flotilla/internal/hub"
	"github.com/flotilla/flotilla/internal/hub/webhook"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestWebhookFollowsTheLeader runs two hub replicas with leader election, each serving the
// webhook on its own port: the configuration names the leader, a replica that starts later does
// not take it over, and when the leader stops the other takes the lease and the configuration,
// answers for ManagedCluster writes, and puts the configuration back when it is deleted or changed.
func TestWebhookFollowsTheLeader(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	ctx := context.Background()
	ns := env.Namespace(t, env.Hub) // the replicas' leader election namespace
	cfg := env.HubIdentity(t, ns)
	vwcs := env.Hub.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	deleteConfigurationAtEnd(t, env)

	opts := func() hub.Options {
		o := hub.DefaultOptions()
		o.HealthProbeAddress, o.MetricsAddress = "0", "0"
		o.SkipNameValidation = true
		o.LeaderElection, o.LeaderElectionNamespace = true, ns
		// Short, so that the test takes seconds; the stopping leader releases the lease anyway.
		o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 6*time.Second, 4*time.Second, 500*time.Millisecond
		o.WebhookAddress = "127.0.0.1:" + strconv.Itoa(freePort(t))
		return o
	}
	a := startReplica(t, cfg, opts())
	a.waitElected(t, 30*time.Second)
	waitNames(t, env, a.url)

	b := startReplica(t, cfg, opts())
	testenv.WaitFor(t, wait, "the second replica's webhook to listen", func(context.Context) (bool, string, error) {
		c, err := net.Dial("tcp", b.address)
		if err == nil {
			_ = c.Close()
		}
		return err == nil, fmt.Sprintf("dial %s: %v", b.address, err), nil
	})
	// Before the fix every replica wrote its own address once its server answered, about at once.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-b.mgr.Elected():
			t.Fatal("the second replica became leader while the first leads")
		default:
		}
		if got := configuredURL(t, env); got != a.url {
			t.Fatalf("the configuration names %s after the second replica started, want the leader's %s", got, a.url)
		}
		time.Sleep(200 * time.Millisecond)
	}

	a.stop()
	b.waitElected(t, 30*time.Second)
	waitNames(t, env, b.url)
	// The API server now sends writes to the second replica: a write the webhook refuses is
	// refused with its message, and an administrator's write goes through.
	waitForWebhook(t, env)
	mc := cluster("wh-replicas", nil, true)
	adm := admin(t, env)
	if err := adm.Create(ctx, mc); err != nil {
		t.Fatalf("creating a ManagedCluster through the new leader's webhook: %v", err)
	}
	deleteAtEnd(t, adm, mc)

	if err := vwcs.Delete(ctx, webhook.ConfigurationName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNames(t, env, b.url)

	got, err := vwcs.Get(ctx, webhook.ConfigurationName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range got.Webhooks {
		got.Webhooks[i].ClientConfig.URL = ptr.To(a.url + "/elsewhere")
		got.Webhooks[i].FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
	}
	if _, err := vwcs.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, wait, "the leader to restore the changed configuration", func(ctx context.Context) (bool, string, error) {
		got, err := vwcs.Get(ctx, webhook.ConfigurationName, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		w := got.Webhooks[0]
		return *w.ClientConfig.URL == b.url+webhook.ManagedClusterPath && *w.FailurePolicy == admissionregistrationv1.Fail,
			fmt.Sprintf("url %s, failurePolicy %s", *w.ClientConfig.URL, *w.FailurePolicy), nil
	})
}

// freePort asks the kernel for a free loopback port.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// configuredURL is the base URL (https://host:port) the configuration sends ManagedCluster
// writes to, or what went wrong reading it.
func configuredURL(t *testing.T, env *testenv.Env) string {
	t.Helper()
	got, err := env.Hub.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(context.Background(), webhook.ConfigurationName, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	for _, w := range got.Webhooks {
		if w.Name == webhook.ManagedClusterWebhookName && w.ClientConfig.URL != nil {
			u := *w.ClientConfig.URL
			if len(u) > len(webhook.ManagedClusterPath) {
				return u[:len(u)-len(webhook.ManagedClusterPath)]
			}
		}
	}
	return "no URL"
}

// waitNames waits until the configuration exists and sends ManagedCluster writes to url.
func waitNames(t *testing.T, env *testenv.Env, url string) {
	t.Helper()
	testenv.WaitFor(t, wait, "the webhook configuration to name "+url, func(context.Context) (bool, string, error) {
		got := configuredURL(t, env)
		return got == url, got, nil
	})
}
