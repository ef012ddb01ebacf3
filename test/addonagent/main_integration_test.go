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
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/agent/addon"
	agentreg "github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/local/testenv"
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

// joinAll starts the hub, joins every spoke (testenv.JoinSpokes) and starts an add-on agent on
// each (certificates of 10 minutes, a lease duration of 1 s so that the lease window is 5 s).
// Everything runs until the test ends.
func joinAll(t *testing.T, env *testenv.Env) []*joined {
	t.Helper()
	env.StartHub(t, testenv.TestHubOptions())
	var out []*joined
	for _, s := range env.JoinSpokes(t) {
		j := &joined{Name: s.Name, Spoke: s.Spoke, Reg: s.Agent, Clock: &offsetClock{}}
		out = append(out, j)
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
		testenv.RunUntilCleanup(t, ad.Run)
	}
	return out
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
