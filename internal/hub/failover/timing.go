package failover

import (
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	failoverv1alpha1 "github.com/flotilla/flotilla/api/failover/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/contract/fencing"
	"github.com/flotilla/flotilla/internal/hub/clusterset"
)

// desiredTiming is the Timing cluster should run under; ok is false when the cluster is not
// fenced. works are the ManifestWorks in its namespace;
// kueueWorker says whether it is a MultiKueue worker of the hub's.
func desiredTiming(mc *clusterv1.ManagedCluster, policies []failoverv1alpha1.FailoverPolicy, sets []clusterv1beta2.ManagedClusterSet, works []workv1.ManifestWork, kueueWorker bool) (fencing.Timing, bool) {
	setsByName := map[string]*clusterv1beta2.ManagedClusterSet{}
	for i := range sets {
		setsByName[sets[i].Name] = &sets[i]
	}
	var ts []fencing.Timing
	for i := range policies {
		p := &policies[i]
		set, found := setsByName[p.Spec.ClusterSet]
		if !found || !p.DeletionTimestamp.IsZero() {
			continue
		}
		if member, err := clusterset.IsMember(set, mc); err != nil || !member {
			continue
		}
		t := fencing.FromSpec(p.Spec)
		// The API server checks the rule; a policy written before the CRD had it does not count.
		if t.Validate() != nil {
			continue
		}
		ts = append(ts, t)
	}
	if t, ok := fencing.Combine(ts); ok {
		return t, true
	}
	if kueueWorker {
		return fencing.Default, true
	}
	for i := range works {
		if fencing.WorkFenced(works[i].Annotations) && works[i].DeletionTimestamp.IsZero() {
			return fencing.Default, true
		}
	}
	return fencing.Timing{}, false
}
