package registration

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
)

// acceptanceStep reads the ManagedCluster with the agent's credentials and shares it with the
// other loops: whether the hub accepts the cluster, and its lease period. It reads every Poll
// until the hub accepts the cluster, then every lease period, which is how soon the agent
// notices a denial or a new lease period.
func (a *Agent) acceptanceStep(ctx context.Context) (time.Duration, error) {
	o := a.opts
	cur := a.hub.Current()
	if cur == nil {
		return o.Poll, nil
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	mc := &clusterv1.ManagedCluster{}
	if err := cur.Client.Get(ctx, client.ObjectKey{Name: o.ClusterName}, mc); err != nil {
		return 0, a.hubErr(cur, "read ManagedCluster "+o.ClusterName, err)
	}
	a.shareCluster(mc, true)
	if !mc.Spec.HubAcceptsClient {
		o.Log.V(1).Info("waiting for the hub to accept the cluster", "cluster", o.ClusterName)
		return o.Poll, nil
	}
	return leaseInterval(renewPeriod(mc)), nil
}

// shareCluster stores mc for the other loops; if notify, it wakes them when mc is a new version.
// A new lease period wakes the lease loop whichever loop read it.
func (a *Agent) shareCluster(mc *clusterv1.ManagedCluster, notify bool) {
	old := a.cluster.Get()
	a.cluster.store(mc, notify && (old == nil || old.ResourceVersion != mc.ResourceVersion))
	if p := renewPeriod(mc); p != a.period.Get() {
		a.period.Set(p)
	}
}
