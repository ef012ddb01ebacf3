package placement

import (
	"context"
	"strconv"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/conditions"
	"github.com/flotilla/flotilla/internal/core/scheduler"
)

// DesiredStatus is p's status after res: the number of selected clusters, the decision groups
// with their PlacementDecisions, lastScoreUpdateTime (spec.scoreRateLimit), and the conditions (a condition whose status does not change
// keeps its transition time). A misconfigured result changes only PlacementMisconfigured: the
// decisions are kept, and so is what the status says about them.
func DesiredStatus(p *clusterv1beta1.Placement, res scheduler.Result) clusterv1beta1.PlacementStatus {
	st := *p.Status.DeepCopy()
	if !res.Misconfigured {
		st.NumberOfSelectedClusters = int32(len(res.Decisions))
		st.LastScoreUpdateTime = res.LastScoreUpdateTime
		st.DecisionGroups = make([]clusterv1beta1.DecisionGroupStatus, 0, len(res.Groups))
		for _, g := range res.Groups {
			gs := clusterv1beta1.DecisionGroupStatus{DecisionGroupIndex: g.Index, DecisionGroupName: g.Name, ClusterCount: int32(len(g.Clusters))}
			for _, s := range res.PlacementDecisions {
				if s.Labels[clusterv1beta1.DecisionGroupIndexLabel] == strconv.Itoa(int(g.Index)) {
					gs.Decisions = append(gs.Decisions, s.Name)
				}
			}
			st.DecisionGroups = append(st.DecisionGroups, gs)
		}
	}
	for _, c := range res.Conditions {
		meta.SetStatusCondition(&st.Conditions, c)
	}
	return st
}

// statusChanged reports whether b says something a does not.
func statusChanged(a, b clusterv1beta1.PlacementStatus) bool {
	return a.NumberOfSelectedClusters != b.NumberOfSelectedClusters || !cmp.Equal(a.DecisionGroups, b.DecisionGroups) ||
		!a.LastScoreUpdateTime.Equal(b.LastScoreUpdateTime) ||
		!conditions.Equal(a.Conditions, b.Conditions)
}

// updateStatus writes p's status when res changes it, as a patch of the difference, and tells
// with an event when the placement becomes misconfigured.
func (r *Reconciler) updateStatus(ctx context.Context, p *clusterv1beta1.Placement, res scheduler.Result) error {
	want := DesiredStatus(p, res)
	if !statusChanged(p.Status, want) {
		return nil
	}
	wasMisconfigured := meta.IsStatusConditionTrue(p.Status.Conditions, clusterv1beta1.PlacementConditionMisconfigured)
	updated := p.DeepCopy()
	updated.Status = want
	if err := r.Client.Status().Patch(ctx, updated, client.MergeFrom(p)); err != nil {
		return err
	}
	if res.Misconfigured && !wasMisconfigured {
		msg := ""
		if c := meta.FindStatusCondition(want.Conditions, clusterv1beta1.PlacementConditionMisconfigured); c != nil {
			msg = c.Message
		}
		r.Recorder.Eventf(p, nil, "Warning", ReasonMisconfigured, "Schedule", "%s", msg)
	}
	return nil
}
