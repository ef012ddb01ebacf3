//go:build integration

package lease

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// grace is how long a lease of 1 s may go unrenewed before the hub calls the cluster Unknown.
const grace = clusterv1.LeaseGraceFactor * time.Second

var userTaint = clusterv1.Taint{Key: "gpu.flotilla.io/maintenance", Value: "driver-upgrade", Effect: clusterv1.TaintEffectPreferNoSelect}

func TestLeaseExpiryAndTaints(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	startControllers(t, env)
	c := hubClient(t, env)
	const cluster = "lease-expiry"
	createCluster(t, c, cluster)
	outer := t
	stop := heartbeat(outer, c, cluster)

	t.Run("renewed and reported True: available, only the user's taint", func(t *testing.T) {
		setAvailable(t, c, cluster, metav1.ConditionTrue)
		waitFor(t, c, cluster, 10*time.Second, "only the user's taint", func(mc *clusterv1.ManagedCluster) bool {
			return taintKeys(mc) == userTaint.Key
		})
		// Longer than the grace period: renewals keep the cluster available.
		deadline := time.Now().Add(grace + 2*time.Second)
		for time.Now().Before(deadline) {
			mc := get(t, c, cluster)
			if available(mc) != "True" || taintKeys(mc) != userTaint.Key {
				t.Fatalf("a cluster renewing its lease changed: %s", describe(mc))
			}
			time.Sleep(500 * time.Millisecond)
		}
	})

	t.Run("renewals stop: Unknown and unreachable within the grace period", func(t *testing.T) {
		stop()
		lastRenew := renewTime(t, c, cluster)
		waitFor(t, c, cluster, grace+3*time.Second, "Available Unknown and the unreachable taint", func(mc *clusterv1.ManagedCluster) bool {
			// The taint is a spec change: the lease controller then writes the condition again at
			// the new generation.
			cond := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
			return available(mc) == "Unknown/"+clusterv1.ManagedClusterReasonLeaseUpdateStopped &&
				taintKeys(mc) == userTaint.Key+" "+clusterv1.ManagedClusterTaintUnreachable && cond.ObservedGeneration == mc.Generation
		})
		mc := get(t, c, cluster)
		cond := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
		// Times on the API server are in whole seconds.
		earliest := lastRenew.Truncate(time.Second).Add(grace)
		if at := cond.LastTransitionTime.Time; at.Before(earliest) || at.After(earliest.Add(2*time.Second)) {
			t.Errorf("Available became Unknown at %s; the lease was last renewed at %s, so want %s to %s",
				at, lastRenew, earliest, earliest.Add(2*time.Second))
		}
		if cond.ObservedGeneration != mc.Generation {
			t.Errorf("Available observedGeneration = %d, want %d", cond.ObservedGeneration, mc.Generation)
		}
		if !strings.Contains(cond.Message, lastRenew.UTC().Format(time.RFC3339)) {
			t.Errorf("Available message %q does not say since when (%s)", cond.Message, lastRenew.UTC().Format(time.RFC3339))
		}
		taint := mc.Spec.Taints[1]
		if taint.Effect != clusterv1.TaintEffectNoSelect || taint.TimeAdded == nil || taint.TimeAdded.Before(&cond.LastTransitionTime) {
			t.Errorf("unreachable taint = %+v, want effect NoSelect added at or after %s", taint, cond.LastTransitionTime)
		}
	})

	t.Run("the agent is back: renewed and True, taint gone", func(t *testing.T) {
		stop = heartbeat(outer, c, cluster)
		setAvailable(t, c, cluster, metav1.ConditionTrue)
		waitFor(t, c, cluster, 10*time.Second, "Available True and only the user's taint", func(mc *clusterv1.ManagedCluster) bool {
			return available(mc) == "True" && taintKeys(mc) == userTaint.Key
		})
	})

	t.Run("the spoke's API server is down: False, unavailable", func(t *testing.T) {
		setAvailable(t, c, cluster, metav1.ConditionFalse)
		waitFor(t, c, cluster, 10*time.Second, "the unavailable taint", func(mc *clusterv1.ManagedCluster) bool {
			return available(mc) == "False" && taintKeys(mc) == userTaint.Key+" "+clusterv1.ManagedClusterTaintUnavailable
		})
	})
	stop()
}

// createCluster creates an accepted ManagedCluster with a 1 s lease and a user's taint, its
// namespace and its lease, as registration would, and deletes them when the test ends.
func createCluster(t *testing.T, c client.Client, name string) {
	t.Helper()
	ctx := context.Background()
	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1.ManagedClusterSpec{
			HubAcceptsClient: true, LeaseDurationSeconds: 1, Taints: []clusterv1.Taint{userTaint},
		},
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: clusterv1.ManagedClusterLeaseName, Namespace: name},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](1),
			RenewTime: &metav1.MicroTime{Time: time.Now()},
		},
	}
	for _, o := range []client.Object{ns, lease, mc} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), mc)
		_ = c.Delete(context.Background(), ns)
	})
}

// heartbeat renews the cluster's lease every 200 ms, as an agent with a very short period would,
// until stop is called or the test ends. The first renewal is done when it returns.
func heartbeat(t *testing.T, c client.Client, cluster string) (stop func()) {
	t.Helper()
	renew := func(ctx context.Context) error {
		l := &coordinationv1.Lease{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: clusterv1.ManagedClusterLeaseName}, l); err != nil {
			return err
		}
		l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
		return c.Update(ctx, l)
	}
	if err := renew(context.Background()); err != nil {
		t.Fatalf("renewing the lease: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
			if err := renew(ctx); err != nil && ctx.Err() == nil {
				t.Logf("renewing the lease: %v", err)
			}
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// setAvailable reports the Available condition as the agent does.
func setAvailable(t *testing.T, c client.Client, cluster string, status metav1.ConditionStatus) {
	t.Helper()
	ctx := context.Background()
	mc := get(t, c, cluster)
	patched := mc.DeepCopy()
	meta.SetStatusCondition(&patched.Status.Conditions, metav1.Condition{
		Type: clusterv1.ManagedClusterConditionAvailable, Status: status, Reason: "AgentProbe",
		Message: "set by the test as the agent would", ObservedGeneration: mc.Generation,
	})
	if err := c.Status().Patch(ctx, patched, client.MergeFrom(mc)); err != nil {
		t.Fatalf("setting Available=%s: %v", status, err)
	}
}

func get(t *testing.T, c client.Client, cluster string) *clusterv1.ManagedCluster {
	t.Helper()
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: cluster}, mc); err != nil {
		t.Fatal(err)
	}
	return mc
}

func renewTime(t *testing.T, c client.Client, cluster string) time.Time {
	t.Helper()
	l := &coordinationv1.Lease{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: cluster, Name: clusterv1.ManagedClusterLeaseName}, l); err != nil {
		t.Fatal(err)
	}
	return l.Spec.RenewTime.Time
}

func waitFor(t *testing.T, c client.Client, cluster string, timeout time.Duration, what string, done func(*clusterv1.ManagedCluster) bool) {
	t.Helper()
	testenv.WaitFor(t, timeout, what, func(ctx context.Context) (bool, string, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return false, "", err
		}
		return done(mc), describe(mc), nil
	})
}

// available is the Available condition's status, with the reason when Unknown.
func available(mc *clusterv1.ManagedCluster) string {
	c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	switch {
	case c == nil:
		return "missing"
	case c.Status == metav1.ConditionUnknown:
		return "Unknown/" + c.Reason
	}
	return string(c.Status)
}

func taintKeys(mc *clusterv1.ManagedCluster) string {
	var keys []string
	for _, t := range mc.Spec.Taints {
		keys = append(keys, t.Key)
	}
	return strings.Join(keys, " ")
}

func describe(mc *clusterv1.ManagedCluster) string {
	var taints []string
	for _, t := range mc.Spec.Taints {
		taints = append(taints, fmt.Sprintf("%s:%s", t.Key, t.Effect))
	}
	return fmt.Sprintf("available=%s taints=[%s]", available(mc), strings.Join(taints, " "))
}
