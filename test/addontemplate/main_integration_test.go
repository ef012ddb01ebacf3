//go:build integration

package addontemplate

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	agentreg "github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/agent/work"
	"github.com/flotilla/flotilla/internal/clusteridentity"
	hubreg "github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{Spokes: 2, CRDs: true})) }

// joined is a spoke registered with the hub by a running registration agent, with a running
// work agent.
type joined struct {
	Name  string
	Spoke *testenv.Cluster
	Reg   *agentreg.Agent
}

// joinAll starts the hub and, on each spoke, a registration agent; accepts the clusters, waits
// for their hub credentials and starts a work agent on each (as test/work does). Everything runs
// until the test ends.
func joinAll(t *testing.T, env *testenv.Env) []*joined {
	t.Helper()
	env.StartHub(t, testenv.TestHubOptions())
	ctx := context.Background()
	hub := env.HubClient(t)
	if err := hubreg.EnsureBootstrapIdentity(ctx, env.Hub.Client); err != nil {
		t.Fatal(err)
	}
	data, err := hubreg.BootstrapKubeconfig(ctx, env.Hub.Client, env.Hub.RESTConfig(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	bootstrap, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	var out []*joined
	for _, s := range env.Spokes {
		a, err := agentreg.New(agentreg.Options{
			ClusterName: s.Name, AgentID: "agent-" + s.Name, Bootstrap: bootstrap, Spoke: s.RESTConfig(),
			Poll: 200 * time.Millisecond, Log: testr.New(t).WithName(s.Name),
		})
		if err != nil {
			t.Fatal(err)
		}
		runUntilCleanup(t, a.Run)
		out = append(out, &joined{Name: s.Name, Spoke: s, Reg: a})
	}
	for _, j := range out {
		testenv.WaitFor(t, 60*time.Second, "a certificate request from "+j.Name, func(ctx context.Context) (bool, string, error) {
			l, err := env.Hub.Client.CertificatesV1().CertificateSigningRequests().List(ctx,
				metav1.ListOptions{LabelSelector: clusteridentity.ClusterNameLabel + "=" + j.Name})
			if err != nil {
				return false, "", err
			}
			if err := hub.Get(ctx, client.ObjectKey{Name: j.Name}, &clusterv1.ManagedCluster{}); err != nil {
				return false, "no ManagedCluster", client.IgnoreNotFound(err)
			}
			return len(l.Items) > 0, fmt.Sprintf("%d requests", len(l.Items)), nil
		})
		if _, err := hubreg.Accept(ctx, hub, env.Hub.Client, j.Name, hubreg.AcceptOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, j := range out {
		testenv.WaitFor(t, 60*time.Second, j.Name+"'s agent to read works in its namespace", func(ctx context.Context) (bool, string, error) {
			c := j.Reg.Hub().Current()
			if c == nil {
				return false, "no credentials yet", nil
			}
			if err := c.Client.List(ctx, &workv1.ManifestWorkList{}, client.InNamespace(j.Name)); err != nil {
				return false, err.Error(), nil
			}
			return true, "", nil
		})
		w, err := work.New(work.Options{
			ClusterName: j.Name, AgentID: "agent-" + j.Name, Hub: j.Reg.Hub(), Spoke: j.Spoke.RESTConfig(),
			Resync: 2 * time.Second, Log: testr.New(t).WithName(j.Name + "-work"),
		})
		if err != nil {
			t.Fatal(err)
		}
		runUntilCleanup(t, w.Run)
	}
	return out
}

// runUntilCleanup runs fn until the test ends.
func runUntilCleanup(t *testing.T, fn func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := fn(ctx); err != nil && ctx.Err() == nil {
			t.Errorf("stopped: %v", err)
		}
	}()
	var stopped atomic.Bool
	t.Cleanup(func() {
		if stopped.CompareAndSwap(false, true) {
			cancel()
			<-done
		}
	})
}
