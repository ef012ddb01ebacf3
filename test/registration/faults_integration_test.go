//go:build integration

package registration

import (
	"context"
	"errors"
	"fmt"
	"github.com/flotilla/flotilla/internal/logtest"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	agentreg "github.com/flotilla/flotilla/internal/agent/registration"
	hubreg "github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// The fault tests run on spoke-3: spoke-1 and spoke-2 belong to the other tests, and stopping a
// spoke's API server must not disturb them.

// leaseWindow is how long the hub waits for a lease renewal before it marks a cluster Unknown,
// for the one-second leases of these tests; margin covers the controllers' reaction.
const (
	leaseWindow = clusterv1.LeaseGraceFactor * time.Second
	margin      = 10 * time.Second
)

// TestFaults breaks what an accepted cluster's liveness depends on, the spoke's API server and
// then the agent, and checks that the hub notices within the lease window and forgets once the
// fault is gone.
func TestFaults(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 3, CRDs: true})
	spoke := env.Spokes[2]
	const cluster = "spoke-3"
	ctx := context.Background()
	// Bring the API server back if a step fails while it is down, so later tests find the fleet whole.
	t.Cleanup(func() {
		if exited, _ := spoke.APIServer.Exited(); exited {
			if err := spoke.StartAPIServer(context.Background()); err != nil {
				t.Errorf("restarting %s's API server: %v", cluster, err)
			}
		}
	})
	startHub(t, env)
	c := hubClient(t, env)
	opts := agentreg.Options{
		ClusterName: cluster, AgentID: "agent-3", Bootstrap: bootstrapConfig(t, env), Spoke: spoke.RESTConfig(),
		LeaseDurationSeconds: 1, InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second,
	}
	// Agents belong to the whole test, not to the step that starts them.
	outer := t
	stop := runAgent(outer, opts)
	testenv.WaitFor(t, 30*time.Second, "a certificate request from the agent", func(context.Context) (bool, string, error) {
		n := len(clusterCSRs(t, env, cluster))
		return n == 1, fmt.Sprintf("%d requests", n), nil
	})
	if _, err := hubreg.Accept(ctx, c, env.Hub.Client, cluster, hubreg.AcceptOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCluster(t, c, cluster, 60*time.Second, "Available=True without hub taints", available)

	t.Run("the spoke's API server stops and comes back", func(t *testing.T) {
		spoke.StopAPIServer()
		waitSpokeDown(t, c, cluster, "down")
		if err := spoke.StartAPIServer(ctx); err != nil {
			t.Fatal(err)
		}
		waitCluster(t, c, cluster, leaseWindow+margin, "Available=True without hub taints", available)
		if err := spoke.Check(); err != nil {
			t.Errorf("%s after its API server came back: %v", cluster, err)
		}
	})

	// A spoke that takes connections and answers nothing holds each request until it times out:
	// the agent's status and inventory wait, its lease does not.
	t.Run("the spoke's API server hangs and resumes", func(t *testing.T) {
		pid := spoke.APIServer.PID()
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		resumed := false
		resume := func() {
			if !resumed {
				resumed = true
				if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
					t.Errorf("resuming %s's API server: %v", cluster, err)
				}
			}
		}
		defer resume()
		waitSpokeDown(t, c, cluster, "hung")
		resume()
		waitCluster(t, c, cluster, leaseWindow+margin, "Available=True without hub taints", available)
		if err := spoke.Check(); err != nil {
			t.Errorf("%s after its API server resumed: %v", cluster, err)
		}
	})

	t.Run("the agent stops and comes back", func(t *testing.T) {
		stop()
		waitCluster(t, c, cluster, leaseWindow+margin, "Available=Unknown (lease update stopped) with the unreachable taint", func(s clusterState) bool {
			return s.available == "Unknown" && s.reason == clusterv1.ManagedClusterReasonLeaseUpdateStopped &&
				s.hasTaint(clusterv1.ManagedClusterTaintUnreachable) && !s.hasTaint(clusterv1.ManagedClusterTaintUnavailable)
		})
		n := len(clusterCSRs(t, env, cluster))
		stop = runAgent(outer, opts)
		waitCluster(t, c, cluster, leaseWindow+margin, "Available=True without hub taints", available)
		if got := len(clusterCSRs(t, env, cluster)); got != n {
			t.Errorf("the restarted agent made %d new certificate requests; it should reuse its Secret", got-n)
		}
	})
}

// waitSpokeDown waits for what OCM shows while a cluster's agent runs but its API server is
// down (how says in what way): the agent renews its lease, so the hub hears from it that the
// spoke's API server does not answer /livez (Available=False) and taints the cluster
// unavailable, not unreachable. It checks that this lasts longer than the hub waits for a lease.
func waitSpokeDown(t *testing.T, c client.Client, cluster, how string) {
	t.Helper()
	unavailable := func(s clusterState) bool {
		return s.available == "False" && s.reason == "ManagedClusterKubeAPIServerUnavailable" &&
			s.hasTaint(clusterv1.ManagedClusterTaintUnavailable) && !s.hasTaint(clusterv1.ManagedClusterTaintUnreachable)
	}
	waitCluster(t, c, cluster, leaseWindow+margin, "Available=False (the spoke's API server) with the unavailable taint only", unavailable)
	renewals, last := 0, leaseRenewTime(t, c, cluster)
	watch := leaseWindow + 2*time.Second
	for end := time.Now().Add(watch); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if s := clusterStateOf(t, c, cluster); !unavailable(s) {
			t.Fatalf("with the spoke's API server %s the cluster became %s, want Available=False with the unavailable taint only", how, s)
		}
		if now := leaseRenewTime(t, c, cluster); now.After(last) {
			renewals, last = renewals+1, now
		}
	}
	if renewals < 3 {
		t.Errorf("the lease was renewed %d times in %s with the spoke's API server %s, want about one a second", renewals, watch, how)
	}
}

// TestBadBootstrapInputIsRetried gives agents bootstrap kubeconfigs that cannot work: each keeps
// trying, backing off, and logs at every failure what is wrong and how to fix it.
func TestBadBootstrapInputIsRetried(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 3, CRDs: true})
	startHub(t, env)
	ctx := context.Background()
	good := bootstrapConfig(t, env)
	spoke1 := env.Spokes[0]

	tests := map[string]struct {
		bootstrap func(t *testing.T) *rest.Config
		wantLog   string
	}{
		"the hub's address with another cluster's CA": {
			bootstrap: func(*testing.T) *rest.Config {
				cfg := rest.CopyConfig(good)
				cfg.CAData = spoke1.Config.CAData
				return cfg
			},
			wantLog: "the bootstrap kubeconfig's server " + good.Host + " presents a certificate not signed by its CA: is it the kubeconfig of this hub?",
		},
		"another cluster's address and CA with the hub's token": {
			bootstrap: func(*testing.T) *rest.Config {
				cfg := rest.CopyConfig(good)
				cfg.Host, cfg.CAData = spoke1.Server, spoke1.Config.CAData
				return cfg
			},
			wantLog: "the bootstrap token was refused (401): it expired or was revoked, or " + spoke1.Server + " is not the hub that issued it",
		},
		"a token with a broken signature": {
			bootstrap: func(*testing.T) *rest.Config {
				cfg := rest.CopyConfig(good)
				cfg.BearerToken = good.BearerToken[:len(good.BearerToken)-8] + strings.Repeat("x", 8)
				return cfg
			},
			wantLog: "the bootstrap token was refused (401): it expired or was revoked",
		},
		"a revoked token": {
			bootstrap: func(t *testing.T) *rest.Config { return revokedBootstrapConfig(t, env, good) },
			wantLog:   "the bootstrap token was refused (401): it expired or was revoked",
		},
		"a token of an identity without the bootstrap role": {
			bootstrap: func(t *testing.T) *rest.Config { return roleLessConfig(t, env, good) },
			wantLog:   "the bootstrap identity may not create ManagedCluster ",
		},
		"an address nothing listens on": {
			bootstrap: func(*testing.T) *rest.Config {
				cfg := rest.CopyConfig(good)
				cfg.Host = "https://127.0.0.1:1"
				return cfg
			},
			wantLog: "cannot reach the hub https://127.0.0.1:1 (connection refused) to create ManagedCluster ",
		},
	}
	i := 0
	for name, tc := range tests {
		i++
		cluster := fmt.Sprintf("spoke-3-bad-%d", i)
		t.Run(name, func(t *testing.T) {
			logs := &logtest.Recorder{}
			opts := agentreg.Options{
				ClusterName: cluster, AgentID: "bad", Bootstrap: tc.bootstrap(t), Spoke: env.Spokes[2].RESTConfig(),
				// A namespace of the test's own, so that no agent finds another's Secret.
				Namespace: env.Namespace(t, env.Spokes[2]), Poll: 200 * time.Millisecond,
				InitialBackoff: 50 * time.Millisecond, MaxBackoff: 400 * time.Millisecond,
				Log: logs.Logger(t, funcr.Options{Verbosity: 1}),
			}
			a, err := agentreg.New(opts)
			if err != nil {
				t.Fatal(err)
			}
			runCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- a.Run(runCtx) }()

			// Several rounds: the backoff reaches its cap (50, 100, 200, 400 ms) and stays there.
			const rounds = 6
			testenv.WaitFor(t, 60*time.Second, fmt.Sprintf("%d failures logged with %q", rounds, tc.wantLog), func(context.Context) (bool, string, error) {
				select {
				case err := <-done:
					t.Fatalf("Run returned %v before its context ended", err)
				default:
				}
				n := len(logs.Failures(tc.wantLog))
				return n >= rounds, fmt.Sprintf("%d such failures; last log entries: %s", n, logs.Last(3)), nil
			})
			for _, e := range logs.Failures(tc.wantLog)[:rounds] {
				if e["error"] == nil || e["cluster"] != cluster || e["retryIn"] == nil {
					t.Errorf("failure logged without the error, the cluster or the delay: %v", e)
				}
			}
			if err := hubClient(t, env).Get(ctx, client.ObjectKey{Name: cluster}, &clusterv1.ManagedCluster{}); !apierrors.IsNotFound(err) {
				t.Errorf("ManagedCluster %s on the hub: err = %v, want NotFound", cluster, err)
			}
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("Run returned %v after its context ended, want context.Canceled", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return within 10s of its context ending")
			}
		})
	}
}

// revokedBootstrapConfig returns a configuration whose bootstrap token was bound to a Secret
// that is then deleted, which revokes it.
func revokedBootstrapConfig(t *testing.T, env *testenv.Env, good *rest.Config) *rest.Config {
	t.Helper()
	ctx := context.Background()
	secrets := env.Hub.Client.CoreV1().Secrets(hubreg.BootstrapNamespace)
	s, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{GenerateName: "revoked-bootstrap-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := env.Hub.Client.CoreV1().ServiceAccounts(hubreg.BootstrapNamespace).CreateToken(ctx, hubreg.BootstrapServiceAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: ptr.To(int64(600)),
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: s.Name, UID: s.UID},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := secrets.Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(good)
	cfg.BearerToken = tr.Status.Token
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The API server learns of the deletion through its cache; wait until it refuses the token.
	testenv.WaitFor(t, 30*time.Second, "the hub to refuse the revoked token", func(ctx context.Context) (bool, string, error) {
		_, err := cs.Discovery().ServerVersion()
		return apierrors.IsUnauthorized(err), fmt.Sprintf("server version: %v", err), nil
	})
	return cfg
}

// roleLessConfig returns a configuration with the token of a service account that has no role.
func roleLessConfig(t *testing.T, env *testenv.Env, good *rest.Config) *rest.Config {
	t.Helper()
	ctx := context.Background()
	ns := env.Namespace(t, env.Hub)
	sa, err := env.Hub.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "no-role"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := env.Hub.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(good)
	cfg.BearerToken = tr.Status.Token
	return cfg
}

// clusterState is what the fault tests watch of a ManagedCluster.
type clusterState struct {
	available, reason string
	taints            []string
}

func (s clusterState) hasTaint(key string) bool { return slices.Contains(s.taints, key) }

func (s clusterState) String() string {
	return fmt.Sprintf("Available=%s (%s), taints %v", s.available, s.reason, s.taints)
}

// available is the healthy state: Available=True and neither hub-owned taint.
func available(s clusterState) bool {
	return s.available == "True" && !s.hasTaint(clusterv1.ManagedClusterTaintUnreachable) &&
		!s.hasTaint(clusterv1.ManagedClusterTaintUnavailable)
}

// waitCluster waits until the cluster's state satisfies done.
func waitCluster(t *testing.T, c client.Client, cluster string, timeout time.Duration, what string, done func(clusterState) bool) {
	t.Helper()
	testenv.WaitFor(t, timeout, cluster+" to be "+what, func(ctx context.Context) (bool, string, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return false, "", err
		}
		s := stateOf(mc)
		return done(s), s.String(), nil
	})
}

func stateOf(mc *clusterv1.ManagedCluster) clusterState {
	s := clusterState{available: "missing"}
	if cond := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); cond != nil {
		s.available, s.reason = string(cond.Status), cond.Reason
	}
	for _, tn := range mc.Spec.Taints {
		s.taints = append(s.taints, tn.Key)
	}
	return s
}

func clusterStateOf(t *testing.T, c client.Client, cluster string) clusterState {
	t.Helper()
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: cluster}, mc); err != nil {
		t.Fatal(err)
	}
	return stateOf(mc)
}
