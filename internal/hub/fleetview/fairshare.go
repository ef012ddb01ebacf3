package fleetview

import (
	"cmp"
	"context"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// FairShare is where a workload's ClusterQueue stands in its cohort under Kueue's fair sharing:
// when the cohort's ClusterQueues borrow, Kueue admits from the one with the lowest weighted
// share first (and may preempt, within the cohort, from those above their share).
type FairShare struct {
	Cohort string `json:"cohort"`
	// ClusterQueues are the cohort's ClusterQueues, the lowest weighted share first: the order in
	// which Kueue serves them when they compete.
	ClusterQueues []FairShareQueue `json:"clusterQueues"`
	// Rank is the workload's ClusterQueue's place in ClusterQueues, from 1.
	Rank int `json:"rank"`
}

// FairShareQueue is one ClusterQueue of a cohort.
type FairShareQueue struct {
	Name string `json:"name"`
	// Weight is spec.fairSharing.weight (Kueue's default 1 when unset).
	Weight string `json:"weight"`
	// WeightedShare is status.fairSharing.weightedShare: its use above its nominal quota over
	// what the cohort can lend, divided by its weight (0 when within its quota).
	WeightedShare     int64 `json:"weightedShare"`
	PendingWorkloads  int32 `json:"pendingWorkloads"`
	AdmittedWorkloads int32 `json:"admittedWorkloads"`
}

// fairShare reads the ClusterQueue cq and the other ClusterQueues of its cohort; nil when it has
// no cohort, or the viewer may not read ClusterQueues.
func fairShare(ctx context.Context, c client.Reader, cq string) (*FairShare, error) {
	own := &kueuev1beta2.ClusterQueue{}
	if err := c.Get(ctx, client.ObjectKey{Name: cq}, own); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			return nil, nil
		}
		return nil, err
	}
	if own.Spec.CohortName == "" {
		return nil, nil
	}
	l := &kueuev1beta2.ClusterQueueList{}
	if err := c.List(ctx, l); err != nil {
		if apierrors.IsForbidden(err) {
			return nil, nil
		}
		return nil, err
	}
	fs := &FairShare{Cohort: string(own.Spec.CohortName)}
	for _, q := range l.Items {
		if q.Spec.CohortName != own.Spec.CohortName {
			continue
		}
		row := FairShareQueue{Name: q.Name, Weight: "1", PendingWorkloads: q.Status.PendingWorkloads, AdmittedWorkloads: q.Status.AdmittedWorkloads}
		if q.Spec.FairSharing != nil && q.Spec.FairSharing.Weight != nil {
			row.Weight = q.Spec.FairSharing.Weight.String()
		}
		if q.Status.FairSharing != nil {
			row.WeightedShare = q.Status.FairSharing.WeightedShare
		}
		fs.ClusterQueues = append(fs.ClusterQueues, row)
	}
	slices.SortFunc(fs.ClusterQueues, func(a, b FairShareQueue) int {
		return cmp.Or(cmp.Compare(a.WeightedShare, b.WeightedShare), strings.Compare(a.Name, b.Name))
	})
	for i, q := range fs.ClusterQueues {
		if q.Name == cq {
			fs.Rank = i + 1
		}
	}
	return fs, nil
}
