package registration

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/contract/fencing"
)

// LeaseJitterFactor spreads the agent's periodic work: each round comes after the lease period
// plus up to 25% of it, as OCM's agent does, so that agents started together do not renew in
// lockstep.
const LeaseJitterFactor = 0.25

// leaseInterval is the wait between two lease renewals: period to 1.25 x period.
func leaseInterval(period time.Duration) time.Duration { return wait.Jitter(period, LeaseJitterFactor) }

// leaseRequestTimeout bounds one renewal: two periods, at most requestTimeout. With the jitter,
// renewals of a working hub are at most 3.25 periods apart, well inside the hub's
// LeaseGraceFactor (5) periods.
func leaseRequestTimeout(period time.Duration) time.Duration { return min(2*period, requestTimeout) }

// leasePeriod is the current lease period: the ManagedCluster's, or the one the agent asks for
// before it has read it.
func (a *Agent) leasePeriod() time.Duration {
	if mc := a.cluster.Get(); mc != nil {
		return renewPeriod(mc)
	}
	return time.Duration(a.opts.LeaseDurationSeconds) * time.Second
}

// leaseStep renews the Lease once while the hub accepts the cluster. It needs nothing from the
// spoke and nothing another loop is doing, so a spoke that does not answer or a renewal waiting
// for approval cannot delay it.
func (a *Agent) leaseStep(ctx context.Context) (time.Duration, error) {
	cur, mc := a.hub.Current(), a.accepted()
	if cur == nil || mc == nil {
		return a.opts.Poll, nil
	}
	period := renewPeriod(mc)
	ctx, cancel := context.WithTimeout(ctx, leaseRequestTimeout(period))
	defer cancel()
	key := client.ObjectKey{Namespace: mc.Name, Name: clusterv1.ManagedClusterLeaseName}
	lease := &coordinationv1.Lease{}
	if err := cur.Client.Get(ctx, key, lease); err != nil {
		return 0, a.hubErr(cur, "renew Lease "+key.String(), err)
	}
	stamp := a.opts.Clock.Now()
	lease.Spec.RenewTime = &metav1.MicroTime{Time: stamp}
	// The period of this renewal: the hub judges it by the longer of this and the cluster's,
	// which may have just changed.
	lease.Spec.LeaseDurationSeconds = ptr.To(int32(period / time.Second))
	if err := cur.Client.Update(ctx, lease); err != nil {
		return 0, a.hubErr(cur, "renew Lease "+key.String(), err)
	}
	a.renewed.Set(stamp)
	return leaseInterval(period), nil
}

// renewPeriod is how often the agent renews the cluster's lease: the cluster's lease period,
// shortened by the fencing Timing the hub set on the cluster (internal/contract/fencing), if any.
func renewPeriod(mc *clusterv1.ManagedCluster) time.Duration {
	p := mc.LeaseDuration()
	if t, ok, _ := fencing.OfCluster(mc.Annotations); ok && t.Lease < p {
		p = t.Lease
	}
	return p
}

// LastRenewed is the time, by the agent's clock, of the last renewal the hub took: the
// RenewTime the hub judges the cluster by. Zero before the first.
func (a *Agent) LastRenewed() time.Time { return a.renewed.Get() }

// Cluster is the ManagedCluster the agent last read from the hub; nil before the first read.
func (a *Agent) Cluster() *clusterv1.ManagedCluster { return a.cluster.Get() }
