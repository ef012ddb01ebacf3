//go:build integration

package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
)

// loadGen renews leases in place of agents: each cluster's lease once per period, the renewals
// spread evenly over the period, one merge patch of spec.renewTime each (an agent's Get and
// Update cost the hub the same: one Lease update event).
type loadGen struct {
	cs     kubernetes.Interface
	cancel context.CancelFunc
	done   sync.WaitGroup

	ok, notFound, failed, late atomic.Int64
	latencyNanos               atomic.Int64
	lastErr                    atomic.Value
}

func startLoadGen(cs kubernetes.Interface, names []string, period time.Duration) *loadGen {
	ctx, cancel := context.WithCancel(context.Background())
	lg := &loadGen{cs: cs, cancel: cancel}
	type job struct {
		name string
		due  time.Time
	}
	jobs := make(chan job, len(names))
	for range renewWorkers {
		lg.done.Go(func() {
			for j := range jobs {
				if time.Since(j.due) > time.Second {
					lg.late.Add(1)
				}
				t := time.Now()
				_, err := renewLease(ctx, lg.cs, j.name)
				switch {
				case err == nil:
					lg.ok.Add(1)
					lg.latencyNanos.Add(int64(time.Since(t)))
				case apierrors.IsNotFound(err):
					lg.notFound.Add(1) // the hub has not created this lease yet
				case ctx.Err() != nil:
				default:
					lg.failed.Add(1)
					lg.lastErr.Store(err.Error())
				}
			}
		})
	}
	lg.done.Go(func() {
		defer close(jobs)
		interval := period / time.Duration(len(names))
		start := time.Now()
		for i := 0; ; i++ {
			due := start.Add(time.Duration(i) * interval)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(due)):
			}
			select {
			case jobs <- job{name: names[i%len(names)], due: due}:
			case <-ctx.Done():
				return
			}
		}
	})
	return lg
}

// renewLease sets a cluster's lease renewTime to now and returns the time written.
func renewLease(ctx context.Context, cs kubernetes.Interface, name string) (time.Time, error) {
	now := time.Now().Truncate(time.Microsecond)
	body := fmt.Sprintf(`{"spec":{"renewTime":%q}}`, now.UTC().Format(metav1.RFC3339Micro))
	_, err := cs.CoordinationV1().Leases(name).Patch(ctx, clusterv1.ManagedClusterLeaseName, types.MergePatchType, []byte(body), metav1.PatchOptions{})
	return now, err
}

func (lg *loadGen) stop() {
	lg.cancel()
	lg.done.Wait()
}

func (lg *loadGen) resetStats() {
	lg.ok.Store(0)
	lg.notFound.Store(0)
	lg.failed.Store(0)
	lg.late.Store(0)
	lg.latencyNanos.Store(0)
}

// rate is the renewals per second over elapsed seconds and their mean latency in milliseconds.
func (lg *loadGen) rate(elapsed float64) (perSecond, meanMillis float64) {
	ok := lg.ok.Load()
	if ok == 0 {
		return 0, 0
	}
	return float64(ok) / elapsed, float64(lg.latencyNanos.Load()) / float64(ok) / 1e6
}

func (lg *loadGen) summary() string {
	s := fmt.Sprintf("renewals ok %d, lease not yet there %d, late %d, failed %d", lg.ok.Load(), lg.notFound.Load(), lg.late.Load(), lg.failed.Load())
	if e, ok := lg.lastErr.Load().(string); ok && lg.failed.Load() > 0 {
		s += " (last: " + e + ")"
	}
	return s
}

// probeTaintLatency creates the probe clusters, renews each lease a few times, stops, and
// measures the time from the last renewal until the hub's unreachable taint is seen.
func probeTaintLatency(b *testing.B, pr progress, cl client.Client, cs kubernetes.Interface, expected time.Duration) []time.Duration {
	ctx := context.Background()
	lats := make([]time.Duration, probes)
	errs := make([]error, probes)
	var wg sync.WaitGroup
	for i := range probes {
		wg.Go(func() {
			// Staggered, so that the probes' expiries do not coincide.
			time.Sleep(time.Duration(i) * 2 * time.Second)
			lats[i], errs[i] = probeOne(ctx, pr, cl, cs, fmt.Sprintf("probe-%d", i), expected)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	return lats
}

func probeOne(ctx context.Context, pr progress, cl client.Client, cs kubernetes.Interface, name string, expected time.Duration) (time.Duration, error) {
	if err := createCluster(ctx, cl, name, probeLeaseSeconds); err != nil {
		return 0, err
	}
	key := client.ObjectKey{Name: name}
	// The hub creates the lease; the cluster must be Available and untainted before its agent
	// "stops".
	if err := poll(ctx, 2*time.Minute, func() (bool, error) {
		_, err := cs.CoordinationV1().Leases(name).Get(ctx, clusterv1.ManagedClusterLeaseName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	}); err != nil {
		return 0, fmt.Errorf("%s: waiting for its lease: %w", name, err)
	}
	// A new cluster has no Available condition until its agent reports one, and the hub
	// taints it unreachable for that moment (as OCM does); wait until the hub has seen the
	// report and lifted the taint, so that the probe starts from a healthy cluster.
	mc := &clusterv1.ManagedCluster{}
	if err := poll(ctx, time.Minute, func() (bool, error) {
		if err := cl.Get(ctx, key, mc); err != nil {
			return false, err
		}
		return healthy(mc), nil
	}); err != nil {
		return 0, fmt.Errorf("%s: not Available and untainted a minute after it joined: taints %v, conditions %v: %w", name, mc.Spec.Taints, mc.Status.Conditions, err)
	}
	period := time.Duration(probeLeaseSeconds) * time.Second
	var last time.Time
	renewals := probeRenewals
	if smoke() {
		renewals = 1 // the smoke pass proves the taint is measured, not how soon
	}
	for k := range renewals {
		if k > 0 {
			time.Sleep(period)
		}
		var err error
		if last, err = renewLease(ctx, cs, name); err != nil {
			return 0, fmt.Errorf("%s: renewing its lease: %w", name, err)
		}
	}
	if err := cl.Get(ctx, key, mc); err != nil {
		return 0, err
	}
	if !healthy(mc) {
		return 0, fmt.Errorf("%s: not Available and untainted at its last renewal: taints %v, conditions %v", name, mc.Spec.Taints, mc.Status.Conditions)
	}
	pr.printf("%s: last renewal at %s, lease stopped", name, last.Format("15:04:05.000"))
	var seen time.Time
	err := poll(ctx, expected+5*time.Minute, func() (bool, error) {
		if err := cl.Get(ctx, key, mc); err != nil {
			return false, err
		}
		seen = time.Now()
		return hasTaint(mc, clusterv1.ManagedClusterTaintUnreachable), nil
	})
	if err != nil {
		return 0, fmt.Errorf("%s: waiting for the unreachable taint: %w", name, err)
	}
	lat := seen.Sub(last)
	var unknownAt string
	if c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); c != nil {
		unknownAt = fmt.Sprintf("Available=%s at +%.0f s (second precision)", c.Status, c.LastTransitionTime.Sub(last).Seconds())
	}
	pr.printf("%s: unreachable taint seen %.2f s after the last renewal (expected %s, excess %.2f s); %s",
		name, lat.Seconds(), expected, (lat - expected).Seconds(), unknownAt)
	return lat, nil
}

// healthy says whether the cluster is Available and carries no unreachable taint.
func healthy(mc *clusterv1.ManagedCluster) bool {
	return !hasTaint(mc, clusterv1.ManagedClusterTaintUnreachable) && meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
}
