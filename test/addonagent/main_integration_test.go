//go:build integration

package addonagent

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/agent/addon"
	agentreg "github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/clusteridentity"
	hubreg "github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{Spokes: 2, CRDs: true})) }

// offsetClock is the real clock moved by offset, to bring a certificate's renewal time closer.
type offsetClock struct {
	clock.RealClock
	offset atomic.Int64
}

func (c *offsetClock) Now() time.Time { return c.RealClock.Now().Add(time.Duration(c.offset.Load())) }

// joined is a spoke registered with the hub, with its registration and add-on agents running.
type joined struct {
	Name  string
	Spoke *testenv.Cluster
	Reg   *agentreg.Agent
	Clock *offsetClock
}

// joinAll starts the hub, and on each spoke a registration agent and an add-on agent (certificates
// of 10 minutes, a lease duration of 1 s so that the lease window is 5 s), accepts the clusters
// and waits until every agent has its hub credentials. Everything runs until the test ends.
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
		out = append(out, &joined{Name: s.Name, Spoke: s, Reg: a, Clock: &offsetClock{}})
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
		testenv.WaitFor(t, 60*time.Second, j.Name+"'s agent to read add-ons in its namespace", func(ctx context.Context) (bool, string, error) {
			c := j.Reg.Hub().Current()
			if c == nil {
				return false, "no credentials yet", nil
			}
			if err := c.Client.List(ctx, &addonv1alpha1.ManagedClusterAddOnList{}, client.InNamespace(j.Name)); err != nil {
				return false, err.Error(), nil
			}
			return true, "", nil
		})
		ad, err := addon.New(addon.Options{
			ClusterName: j.Name, AgentID: "agent-" + j.Name, Hub: j.Reg.Hub(), Spoke: j.Spoke.RESTConfig(),
			CertificateLifetime: 10 * time.Minute, Poll: 200 * time.Millisecond, Resync: 5 * time.Second,
			LeaseDurationSeconds: 1, HealthSyncInterval: time.Second,
			InitialBackoff: 200 * time.Millisecond, MaxBackoff: 2 * time.Second,
			Clock: j.Clock, Log: testr.New(t).WithName(j.Name + "-addon"),
		})
		if err != nil {
			t.Fatal(err)
		}
		runUntilCleanup(t, ad.Run)
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
	t.Cleanup(func() { cancel(); <-done })
}

// newAddOn creates the ManagedClusterAddOn name in cluster's namespace, installed in ns on the
// spoke, and writes its status as the add-on's hub controller would (registrations, health).
func newAddOn(t *testing.T, hub client.Client, cluster, name, ns string, status addonv1alpha1.ManagedClusterAddOnStatus) *addonv1alpha1.ManagedClusterAddOn {
	t.Helper()
	mca := &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name},
		Spec:       addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: ns},
	}
	testenv.Create(t, hub, mca)
	t.Cleanup(func() { _ = hub.Delete(context.Background(), mca) })
	setStatus(t, hub, mca, func(s *addonv1alpha1.ManagedClusterAddOnStatus) { *s = status })
	return mca
}

// setStatus changes an add-on's status as its hub controller would.
func setStatus(t *testing.T, hub client.Client, mca *addonv1alpha1.ManagedClusterAddOn, change func(*addonv1alpha1.ManagedClusterAddOnStatus)) {
	t.Helper()
	testenv.WaitFor(t, 10*time.Second, "writing the status of "+mca.Namespace+"/"+mca.Name, func(ctx context.Context) (bool, string, error) {
		if err := hub.Get(ctx, client.ObjectKeyFromObject(mca), mca); err != nil {
			return false, "", err
		}
		change(&mca.Status)
		if err := hub.Status().Update(ctx, mca); err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
}

// waitCondition waits until the add-on's condition t has status and reason, and returns it.
func waitCondition(t *testing.T, hub client.Client, cluster, name, typ string, status metav1.ConditionStatus, reason string, within time.Duration) metav1.Condition {
	t.Helper()
	var got metav1.Condition
	testenv.WaitFor(t, within, fmt.Sprintf("%s/%s %s=%s (%s)", cluster, name, typ, status, reason), func(ctx context.Context) (bool, string, error) {
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, mca); err != nil {
			return false, "", client.IgnoreNotFound(err)
		}
		c := meta.FindStatusCondition(mca.Status.Conditions, typ)
		if c == nil {
			return false, "no condition", nil
		}
		got = *c
		return c.Status == status && c.Reason == reason, fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message), nil
	})
	return got
}
