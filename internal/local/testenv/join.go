package testenv

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	agentreg "github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
	hubreg "github.com/flotilla/flotilla/internal/hub/registration"
)

// Joined is a spoke registered with the hub by a running registration agent.
type Joined struct {
	Name  string
	Spoke *Cluster
	// Agent is the registration agent; Agent.Hub() gives its hub credentials to the other agents.
	Agent *agentreg.Agent
	// Link is the spoke's path to and from the hub, which the test may cut (JoinSpokesLinked);
	// nil for JoinSpokes, whose agents reach the hub directly.
	Link *Link

	t         *testing.T
	opts      agentreg.Options
	stopAgent func()
}

// StopAgent stops the registration agent at once, as a killed process stops: it says nothing to
// the hub. Its hub credentials stay in the spoke's Secret, as a pod's would.
func (j *Joined) StopAgent() { j.stopAgent() }

// StartAgent starts a new registration agent for the spoke, with the options of the first one
// and none of its memory, as a restarted pod would; it replaces Agent and runs until the test
// that joined the spoke ends.
func (j *Joined) StartAgent() {
	j.t.Helper()
	a, err := agentreg.New(j.opts)
	if err != nil {
		j.t.Fatal(err)
	}
	j.Agent = a
	j.stopAgent = RunUntilCleanup(j.t, a.Run)
}

// JoinSpokes runs a registration agent on every spoke (agent id "agent-<spoke>"), accepts the
// clusters on the hub as `flotilla accept` does, and waits until every agent holds hub
// credentials that can read its cluster's namespace. The hub must run (StartHub). The agents run
// until the test ends.
func (e *Env) JoinSpokes(t *testing.T) []*Joined {
	t.Helper()
	return e.join(t, false, nil)
}

// JoinSpokesLinked is JoinSpokes through a Link per spoke (Joined.Link), which the test may cut
// and heal: each agent's bootstrap configuration, and so the hub kubeconfig it builds, names the
// link's HubURL, and each ManagedCluster's spec.managedClusterClientConfigs names the link's
// SpokeURL with the spoke's CA. Stored hub credentials name the address they were issued for, so
// each spoke's are deleted before its agent starts (it registers again, through the link) and when
// the test ends (a later join does not reuse a closed link). It fails the test if this machine
// cannot cut ports (netchaos.Check: iptables, as root). mutate, if not nil, changes each agent's
// options before it starts (a short LeaseDurationSeconds, say, for a ManagedCluster the agent
// creates).
func (e *Env) JoinSpokesLinked(t *testing.T, mutate func(*agentreg.Options)) []*Joined {
	t.Helper()
	return e.join(t, true, mutate)
}

func (e *Env) join(t *testing.T, linked bool, mutate func(*agentreg.Options)) []*Joined {
	t.Helper()
	ctx := context.Background()
	hub := e.HubClient(t)
	if err := hubreg.EnsureBootstrapIdentity(ctx, e.Hub.Client); err != nil {
		t.Fatal(err)
	}
	data, err := hubreg.BootstrapKubeconfig(ctx, e.Hub.Client, e.Hub.RESTConfig(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	bootstrap, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	var out []*Joined
	// Requests are stamped with the API server's clock, to the second.
	started := time.Now().Add(-time.Second)
	for _, s := range e.Spokes {
		j := &Joined{Name: s.Name, Spoke: s, t: t}
		cfg := bootstrap
		if linked {
			j.Link = e.NewLink(t, s)
			cfg = rest.CopyConfig(bootstrap)
			cfg.Host = j.Link.HubURL()
			forgetHubCredentials(t, s)
			t.Cleanup(func() { forgetHubCredentials(t, s) })
		}
		opts := agentreg.Options{
			ClusterName: s.Name, AgentID: "agent-" + s.Name, Bootstrap: cfg, Spoke: s.RESTConfig(),
			Poll: 200 * time.Millisecond, Log: testr.New(t).WithName(s.Name),
		}
		if !linked {
			// Where the hub's consumers (Kueue's ClusterProfile path) reach the spoke; a linked
			// join names the link's address instead (setClientConfig).
			opts.ExternalServerURLs = []string{s.RESTConfig().Host}
		}
		if mutate != nil {
			mutate(&opts)
		}
		j.opts = opts
		j.StartAgent()
		out = append(out, j)
	}
	for _, j := range out {
		WaitFor(t, 60*time.Second, "a certificate request from "+j.Name, func(ctx context.Context) (bool, string, error) {
			l, err := e.Hub.Client.CertificatesV1().CertificateSigningRequests().List(ctx,
				metav1.ListOptions{LabelSelector: clusteridentity.ClusterNameLabel + "=" + j.Name})
			if err != nil {
				return false, "", err
			}
			if err := hub.Get(ctx, client.ObjectKey{Name: j.Name}, &clusterv1.ManagedCluster{}); err != nil {
				return false, "no ManagedCluster", client.IgnoreNotFound(err)
			}
			n := len(l.Items)
			if linked {
				// The agent registers again: wait for its new request, not one of an earlier join.
				// The hub may have approved it already (the cluster is accepted from before).
				n = madeSince(l.Items, started)
			}
			return n > 0, fmt.Sprintf("%d requests, %d pending", len(l.Items), pending(l.Items)), nil
		})
		if _, err := hubreg.Accept(ctx, hub, e.Hub.Client, j.Name, hubreg.AcceptOptions{}); err != nil {
			t.Fatal(err)
		}
		if j.Link != nil {
			if err := j.Link.setClientConfig(ctx, hub, j.Name); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, j := range out {
		WaitFor(t, 60*time.Second, j.Name+"'s agent to read its namespace on the hub", func(ctx context.Context) (bool, string, error) {
			c := j.Agent.Hub().Current()
			if c == nil {
				return false, "no credentials yet", nil
			}
			// The namespace role is the last thing acceptance grants.
			if err := c.Client.List(ctx, &workv1.ManifestWorkList{}, client.InNamespace(j.Name)); err != nil {
				return false, err.Error(), nil
			}
			return true, "", nil
		})
	}
	return out
}

// RunUntilCleanup runs fn until the returned stop is called or the test ends; an error that fn
// returns before then fails the test.
func RunUntilCleanup(t testing.TB, fn func(context.Context) error) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := fn(ctx); err != nil && ctx.Err() == nil {
			t.Errorf("stopped: %v", err)
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
