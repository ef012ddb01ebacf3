//go:build integration

package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	agentreg "github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// leaseSeconds is the cluster's lease period: short, so that missed renewals show quickly.
const leaseSeconds = 1

func TestPartitionStopsLeaseAndSpokeAccess(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 1, CRDs: true})
	env.StartHub(t, testenv.TestHubOptions())
	// The agent creates the ManagedCluster with the short period; a ManagedCluster left by an
	// earlier join is given it below.
	j := env.JoinSpokesLinked(t, func(o *agentreg.Options) { o.LeaseDurationSeconds = leaseSeconds })[0]
	hub := env.HubClient(t)
	ctx := context.Background()

	mc := &clusterv1.ManagedCluster{}
	if err := hub.Get(ctx, client.ObjectKey{Name: j.Name}, mc); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(mc.DeepCopy())
	mc.Spec.LeaseDurationSeconds = leaseSeconds
	if err := hub.Patch(ctx, mc, patch); err != nil {
		t.Fatal(err)
	}
	// The agent reaches the hub through the link only: the credentials it was issued name it.
	if cur := j.Agent.Hub().Current(); cur == nil || cur.Config.Host != j.Link.HubURL() {
		t.Fatalf("the agent's hub credentials are %+v; want them for %s (the link)", cur, j.Link.HubURL())
	}
	if got := mc.Spec.ManagedClusterClientConfigs; len(got) != 1 || got[0].URL != j.Link.SpokeURL() || len(got[0].CABundle) == 0 {
		t.Fatalf("spec.managedClusterClientConfigs = %+v; want %s with the spoke's CA", got, j.Link.SpokeURL())
	}
	// The hub side reaches the spoke at spec.managedClusterClientConfigs[0], the link.
	cfg := j.Link.SpokeConfig()
	cfg.Timeout = 2 * time.Second
	spokeViaLink, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("joined: the lease is renewed and the spoke answers through the link", func(t *testing.T) {
		// An agent that created the ManagedCluster renews with the short period at once; one
		// that found it learns the new period when it next reads it, within a default period.
		testenv.WaitFor(t, 2*clusterv1.DefaultLeaseDurationSeconds*time.Second, "renewals with the short period", func(ctx context.Context) (bool, string, error) {
			l := &coordinationv1.Lease{}
			if err := hub.Get(ctx, client.ObjectKey{Namespace: j.Name, Name: clusterv1.ManagedClusterLeaseName}, l); err != nil {
				return false, "", client.IgnoreNotFound(err)
			}
			d := l.Spec.LeaseDurationSeconds
			return d != nil && *d == leaseSeconds, fmt.Sprintf("leaseDurationSeconds %v", d), nil
		})
		waitRenewed(t, hub, j.Name, renewTime(t, hub, j.Name), 30*time.Second)
		if _, err := spokeViaLink.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatalf("listing the spoke's namespaces through the link: %v", err)
		}
		waitAvailable(t, hub, j.Name, metav1.ConditionTrue, 30*time.Second)
	})

	t.Run("cut: renewals stop, the spoke does not answer through the link, the hub marks the cluster Unknown", func(t *testing.T) {
		j.Link.Cut(t)
		// A renewal the hub received just before the cut may still be stored: let it land.
		time.Sleep(2 * leaseSeconds * time.Second)
		last := renewTime(t, hub, j.Name)
		// Over several lease periods, no renewal crosses the cut.
		for range 5 {
			time.Sleep(leaseSeconds * time.Second)
			if now := renewTime(t, hub, j.Name); !now.Equal(last) {
				t.Fatalf("the lease was renewed at %s across the cut (last renewal before it %s)", now, last)
			}
		}
		if _, err := spokeViaLink.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err == nil {
			t.Error("the spoke's namespaces were listed through a cut link")
		} else {
			t.Logf("through the cut link: %v", err)
		}
		// The spoke itself, and the hub, still answer the test's own clients.
		if _, err := j.Spoke.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("the spoke, reached directly, failed: %v", err)
		}
		// The hub's lease controller sees the renewals stop.
		waitAvailable(t, hub, j.Name, metav1.ConditionUnknown, (clusterv1.LeaseGraceFactor*leaseSeconds+30)*time.Second)
	})

	t.Run("healed: renewals resume, the spoke answers through the link, the cluster is available", func(t *testing.T) {
		before := renewTime(t, hub, j.Name)
		j.Link.Heal(t)
		// TCP sends what was dropped again after a backoff of up to tens of seconds; client-go
		// gives up a dead connection after its health check. Either way renewals resume.
		waitRenewed(t, hub, j.Name, before, 120*time.Second)
		testenv.WaitFor(t, 30*time.Second, "the spoke's namespaces through the healed link", func(ctx context.Context) (bool, string, error) {
			_, err := spokeViaLink.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			return true, "", nil
		})
		waitAvailable(t, hub, j.Name, metav1.ConditionTrue, 60*time.Second)
	})
}

// renewTime is the last renewal of cluster's lease on the hub.
func renewTime(t *testing.T, hub client.Client, cluster string) time.Time {
	t.Helper()
	l := &coordinationv1.Lease{}
	if err := hub.Get(context.Background(), client.ObjectKey{Namespace: cluster, Name: clusterv1.ManagedClusterLeaseName}, l); err != nil {
		t.Fatal(err)
	}
	if l.Spec.RenewTime == nil {
		return time.Time{}
	}
	return l.Spec.RenewTime.Time
}

// waitRenewed waits until cluster's lease is renewed after since.
func waitRenewed(t *testing.T, hub client.Client, cluster string, since time.Time, timeout time.Duration) {
	t.Helper()
	testenv.WaitFor(t, timeout, "a renewal of "+cluster+"'s lease after "+since.Format(time.RFC3339Nano), func(ctx context.Context) (bool, string, error) {
		l := &coordinationv1.Lease{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: cluster, Name: clusterv1.ManagedClusterLeaseName}, l); err != nil {
			return false, "", client.IgnoreNotFound(err)
		}
		if l.Spec.RenewTime == nil {
			return false, "never renewed", nil
		}
		return l.Spec.RenewTime.After(since), "renewed at " + l.Spec.RenewTime.Format(time.RFC3339Nano), nil
	})
}

// waitAvailable waits until cluster's Available condition has status.
func waitAvailable(t *testing.T, hub client.Client, cluster string, status metav1.ConditionStatus, timeout time.Duration) {
	t.Helper()
	testenv.WaitFor(t, timeout, cluster+" Available "+string(status), func(ctx context.Context) (bool, string, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return false, "", err
		}
		c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
		if c == nil {
			return false, "no Available condition", nil
		}
		return c.Status == status, fmt.Sprintf("Available %s (%s: %s)", c.Status, c.Reason, c.Message), nil
	})
}
