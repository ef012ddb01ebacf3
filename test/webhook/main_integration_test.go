//go:build integration

package webhook

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/hub"
	"github.com/flotilla/flotilla/internal/hub/webhook"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{CRDs: true})) }

const wait = 30 * time.Second

var setLogger sync.Once

// startHub runs the hub, webhook included, until the test ends, and returns once the API server
// sends ManagedCluster writes to this hub's webhook. The hub runs as a service account bound only
// to its generated roles (config/rbac), so every test here also shows that they are enough. When
// the test ends it stops the hub and deletes the webhook configuration, which would otherwise
// refuse every later write.
func startHub(t *testing.T, env *testenv.Env) {
	t.Helper()
	deleteConfigurationAtEnd(t, env)
	opts := hub.DefaultOptions()
	opts.LeaderElection, opts.HealthProbeAddress, opts.MetricsAddress = false, "0", "0"
	opts.SkipNameValidation = true      // each test starts its own hub
	opts.WebhookAddress = "127.0.0.1:0" // a free port
	startReplica(t, env.HubIdentity(t, ""), opts)
	waitForWebhook(t, env)
}

// replica is a hub manager running in the test process.
type replica struct {
	mgr ctrl.Manager
	// address is where its webhook listens (host:port), url what a configuration naming it says
	// (https://host:port).
	address, url string
	// stop stops it and waits until it has; the test's end does too.
	stop func()
}

// startReplica runs a hub manager with opts as cfg's identity until stop is called or the test
// ends. Stopping cancels its context: with leader election, a leader releases its lease
// (LeaderElectionReleaseOnCancel) and Start returns, and nothing exits the test process.
func startReplica(t *testing.T, cfg *rest.Config, opts hub.Options) *replica {
	t.Helper()
	// One process-wide logger that outlives each test (the manager may log while stopping).
	setLogger.Do(func() {
		ctrl.SetLogger(funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{}))
	})
	mgr, err := hub.NewManager(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	r := &replica{mgr: mgr, address: opts.WebhookAddress, url: "https://" + opts.WebhookAddress}
	r.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("hub manager: %v", err)
			}
		})
	}
	t.Cleanup(r.stop)
	return r
}

// waitElected waits until r leads.
func (r *replica) waitElected(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-r.mgr.Elected():
	case <-time.After(timeout):
		t.Fatalf("the replica at %s did not become leader within %s", r.address, timeout)
	}
}

// deleteConfigurationAtEnd deletes the webhook configuration when the test ends; called before
// the hubs start, it runs after they stop (cleanups run last-in first-out).
func deleteConfigurationAtEnd(t *testing.T, env *testenv.Env) { env.DeleteWebhookConfigurationAtEnd(t) }

// waitForWebhook returns once the API server sends ManagedCluster writes to a hub that answers.
// The API server learns of the configuration a moment after it is written, and may still hold an
// earlier one: it probes with a dry run that only the webhook refuses.
func waitForWebhook(t *testing.T, env *testenv.Env) {
	t.Helper()
	const probeUser = "wh-probe"
	grant(t, env, probeUser, rbacv1.PolicyRule{APIGroups: []string{webhook.ClusterGroup}, Resources: []string{"managedclusters"}, Verbs: []string{"create"}})
	probe := as(t, env, probeUser)
	want := `managedclusters "wh-probe": setting spec.hubAcceptsClient to true needs permission`
	testenv.WaitFor(t, wait, "the API server to call the hub's webhook", func(ctx context.Context) (bool, string, error) {
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "wh-probe"}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
		err := probe.Create(ctx, mc, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), want), fmt.Sprintf("dry-run create: %v", err), nil
	})
}

// as is a client of the hub that impersonates user in groups.
func as(t *testing.T, env *testenv.Env, user string, groups ...string) client.Client {
	t.Helper()
	cfg := env.Hub.RESTConfig()
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// admin is an uncached administrator's client (system:masters).
func admin(t *testing.T, env *testenv.Env) client.Client {
	t.Helper()
	c, err := client.New(env.Hub.RESTConfig(), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var grants struct {
	sync.Mutex
	n int
}

// grant gives user the rules cluster-wide until the test ends.
func grant(t *testing.T, env *testenv.Env, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	grants.Lock()
	grants.n++
	name := fmt.Sprintf("wh-test-%s-%d", user, grants.n)
	grants.Unlock()
	ctx := context.Background()
	rbac := env.Hub.Client.RbacV1()
	if _, err := rbac.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// update reads the object named like obj into it, applies change and writes it back, again on
// conflicts (the hub's controllers write the same objects).
func update(ctx context.Context, c client.Client, obj client.Object, change func()) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		return c.Update(ctx, obj)
	})
}

// denied checks that err is the webhook's refusal and holds want.
func denied(t *testing.T, what string, err error, want string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s: allowed, want refused with %q", what, want)
	case !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "admission webhook"):
		t.Errorf("%s: %v, want the webhook's refusal with %q", what, err, want)
	case !strings.Contains(err.Error(), want):
		t.Errorf("%s: refused with\n  %v\nwant the message to hold\n  %s", what, err, want)
	}
}

// eventually retries do until it succeeds: a new RoleBinding takes a moment to reach the API
// server's authorizer.
func eventually(t *testing.T, what string, do func(ctx context.Context) error) {
	t.Helper()
	testenv.WaitFor(t, wait, what, func(ctx context.Context) (bool, string, error) {
		err := do(ctx)
		return err == nil, fmt.Sprintf("%v", err), nil
	})
}

// deleteAtEnd deletes obj with the administrator's client when the test ends, before the hub
// stops (cleanups run last-in first-out), so the hub can remove its finalizers.
func deleteAtEnd(t *testing.T, c client.Client, obj client.Object) {
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), obj); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting %s: %v", obj.GetName(), err)
		}
	})
}
