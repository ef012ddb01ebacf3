package dynamicscoring

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/contract/scoringwire"
)

// ConditionScored is the AddOnPlacementScore condition that says whether the last scoring
// succeeded. While it is False the scores are not refreshed and expire at validUntil.
const ConditionScored = "Scored"

// ReasonScorerNotActive is the Scored reason of a scorer the hub no longer lists as active.
const ReasonScorerNotActive = "ScorerNotActive"

// outcome is the result of one scoring: scores, or the reason and message of a failure.
type outcome struct {
	scores          []clusterv1alpha1.AddOnPlacementScoreItem
	reason, message string
}

func failed(reason, format string, args ...any) outcome {
	return outcome{reason: reason, message: fmt.Sprintf(format, args...)}
}

// write records o on the score's AddOnPlacementScore: on success the scores, validUntil
// ValidIntervals intervals ahead and Scored=True; on failure only Scored=False.
func (r *runner) write(ctx context.Context, s scoringwire.Summary, o outcome) error {
	now := r.env.Clock.Now()
	key := client.ObjectKey{Namespace: r.env.ClusterName, Name: ResourceName(s.ScoreName)}
	aps := &clusterv1alpha1.AddOnPlacementScore{}
	fix := fmt.Sprintf("rename the score of %s (scoring.params.name), or delete the AddOnPlacementScore", s.ScorerRef())
	if err := builtin.GetOrCreateOwn(ctx, r.env.Hub, key, aps, Name, fix); err != nil {
		return err
	}
	c := metav1.Condition{Type: ConditionScored, Status: metav1.ConditionTrue, Reason: ReasonScored,
		LastTransitionTime: metav1.NewTime(now.Truncate(time.Second)), ObservedGeneration: aps.Generation}
	if o.reason == "" {
		until := metav1.NewTime(now.Add(ValidIntervals * interval(s)).Truncate(time.Second))
		aps.Status.Scores = slices.Clone(o.scores)
		aps.Status.ValidUntil = &until
		c.Message = fmt.Sprintf("%s: %d scores, valid until %s", s.ScorerRef(), len(o.scores), until.UTC().Format(time.RFC3339))
	} else {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, o.reason, o.message
		if aps.Status.ValidUntil != nil {
			c.Message += fmt.Sprintf("; the last scores are not refreshed and expire at %s", aps.Status.ValidUntil.UTC().Format(time.RFC3339))
		}
	}
	if len(c.Message) > 32768 {
		c.Message = c.Message[:32768]
	}
	meta.SetStatusCondition(&aps.Status.Conditions, c)
	if err := r.env.Hub.Status().Update(ctx, aps); err != nil {
		return fmt.Errorf("writing the scores of AddOnPlacementScore %s: %w", key, err)
	}
	return nil
}

// markInactive says on the score of a scorer the hub stopped listing that it is no longer
// refreshed.
func (r *runner) markInactive(ctx context.Context, s scoringwire.Summary) {
	key := client.ObjectKey{Namespace: r.env.ClusterName, Name: ResourceName(s.ScoreName)}
	aps := &clusterv1alpha1.AddOnPlacementScore{}
	if err := r.env.Hub.Get(ctx, key, aps); err != nil || aps.Labels[Label] != Name {
		return
	}
	meta.SetStatusCondition(&aps.Status.Conditions, metav1.Condition{Type: ConditionScored, Status: metav1.ConditionFalse,
		Reason: ReasonScorerNotActive, LastTransitionTime: metav1.NewTime(r.env.Clock.Now().Truncate(time.Second)), ObservedGeneration: aps.Generation,
		Message: fmt.Sprintf("the hub no longer lists %s as active for this cluster (it was deleted, masked, or its healthStatus is not Active: see the DynamicScorer's status and events); "+
			"the scores are not refreshed and this object is deleted once they expired", s.ScorerRef())})
	if err := r.env.Hub.Status().Update(ctx, aps); err != nil {
		r.env.Log.Error(err, "marking the scores of an inactive scorer", "addOnPlacementScore", key)
	}
}

// collect deletes the add-on's AddOnPlacementScores of score names not in active whose scores
// expired (all of them when active is nil: the add-on is switched off).
func (r *runner) collect(ctx context.Context, active map[string]scoringwire.Summary) error {
	l := &clusterv1alpha1.AddOnPlacementScoreList{}
	if err := r.env.Hub.List(ctx, l, client.InNamespace(r.env.ClusterName), client.MatchingLabels{Label: Name}); err != nil {
		return fmt.Errorf("listing the AddOnPlacementScores of the add-on %s: %w", Name, err)
	}
	keep := map[string]bool{}
	for name := range active {
		keep[ResourceName(name)] = true
	}
	now := r.env.Clock.Now()
	for i := range l.Items {
		aps := &l.Items[i]
		if active != nil && (keep[aps.Name] || aps.Status.ValidUntil != nil && aps.Status.ValidUntil.After(now)) {
			continue
		}
		uid := aps.UID
		if err := r.env.Hub.Delete(ctx, aps, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting AddOnPlacementScore %s/%s: %w", aps.Namespace, aps.Name, err)
		}
	}
	return nil
}
