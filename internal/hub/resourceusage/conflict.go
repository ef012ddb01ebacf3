package resourceusage

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
)

// FieldManager is the field manager of the hub's writes to AddOnPlacementScore
// resource-usage-score: in the object's managedFields it tells the hub's writes from others'.
const FieldManager = "flotilla-resource-usage"

// Reasons of builtinaddon.ScoreConflictCondition.
const (
	// ReasonOtherAddOnEnabled: OCM's resource-usage-collect is enabled on the cluster too.
	ReasonOtherAddOnEnabled = "ResourceUsageCollectEnabled"
	// ReasonScoreWrittenByOther: someone else writes (or made) the score.
	ReasonScoreWrittenByOther = "ScoreWrittenByOther"
	// ReasonNoConflict: the hub is the score's only writer again.
	ReasonNoConflict = "NoScoreConflict"
)

// otherWriters lists who else writes score: the field managers, other than the hub's, that own
// part of its status. A score without the hub's label was not made by the hub: its writers are all others
// (and "unknown" when it names none). The hub's own writes are those of FieldManager, and of
// whichever manager set the hub's label (the hub before it named its manager).
func otherWriters(score *clusterv1alpha1.AddOnPlacementScore) []string {
	ours := map[string]bool{}
	mine := score.Labels[builtinaddon.Label] == Name
	if mine {
		ours[FieldManager] = true
		for _, e := range score.ManagedFields {
			if setsLabel(e, builtinaddon.Label) {
				ours[e.Manager] = true
			}
		}
	}
	var out []string
	for _, e := range score.ManagedFields {
		if writesStatus(e) && !ours[e.Manager] && !slices.Contains(out, e.Manager) {
			out = append(out, e.Manager)
		}
	}
	if !mine && len(out) == 0 {
		out = append(out, "unknown")
	}
	slices.Sort(out)
	return out
}

// writesStatus says whether a managedFields entry owns part of the status (the scores): the
// entry of a status update, whatever its subresource field says.
func writesStatus(e metav1.ManagedFieldsEntry) bool {
	if e.FieldsV1 == nil {
		return false
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(e.FieldsV1.GetRawBytes(), &fields); err != nil {
		return false
	}
	_, ok := fields["f:status"]
	return ok
}

// setsLabel says whether a managedFields entry owns label key.
func setsLabel(e metav1.ManagedFieldsEntry, key string) bool {
	if e.FieldsV1 == nil {
		return false
	}
	var fields struct {
		Metadata struct {
			Labels map[string]json.RawMessage `json:"f:labels"`
		} `json:"f:metadata"`
	}
	if err := json.Unmarshal(e.FieldsV1.GetRawBytes(), &fields); err != nil {
		return false
	}
	_, ok := fields.Metadata.Labels["f:"+key]
	return ok
}

// scoreConflict is the ScoreConflict condition of the cluster's resource-usage add-on, and
// whether the hub must leave the score alone. The hub yields when OCM's resource-usage-collect is
// enabled on the cluster (ocmEnabled) or when anyone else writes the score (score may be nil):
// two writers of one object would overwrite each other in turn, and placements would see the
// figures of one, then of the other. hadCondition: the add-on carries the condition already (a
// False one is written only to end a True one).
func scoreConflict(namespace string, score *clusterv1alpha1.AddOnPlacementScore, ocmEnabled, hadCondition bool) (*metav1.Condition, bool) {
	scoreRef := "AddOnPlacementScore " + namespace + "/" + clusterv1alpha1.ResourceUsageScoreName
	var writers []string
	if score != nil {
		writers = otherWriters(score)
	}
	c := &metav1.Condition{Type: builtinaddon.ScoreConflictCondition, Status: metav1.ConditionTrue}
	switch {
	case ocmEnabled:
		c.Reason = ReasonOtherAddOnEnabled
		c.Message = fmt.Sprintf("OCM's add-on %[1]s is enabled on this cluster too (ManagedClusterAddOn %[2]s/%[1]s), and both write %[3]s: "+
			"the hub does not write it while %[1]s is enabled, so placements see %[1]s's scores. Disable one of the two: "+
			"delete ManagedClusterAddOn %[2]s/%[1]s (then delete %[3]s, and the hub writes its own), or %[2]s/%[4]s.",
			builtinaddon.ResourceUsageCollect, namespace, scoreRef, Name)
	case len(writers) > 0:
		c.Reason = ReasonScoreWrittenByOther
		c.Message = fmt.Sprintf("%s is written by another writer (field manager %s), so the hub does not write or delete it. "+
			"Stop that writer and delete %s: the hub then writes its own; or delete ManagedClusterAddOn %s/%s.",
			scoreRef, strings.Join(writers, ", "), scoreRef, namespace, Name)
	default:
		if !hadCondition {
			return nil, false
		}
		c.Status, c.Reason = metav1.ConditionFalse, ReasonNoConflict
		c.Message = "The hub is the only writer of " + scoreRef + "."
		return c, false
	}
	return c, true
}

// reportConflict writes the ScoreConflict condition of the cluster's resource-usage add-on when
// it changed, and says whether the hub must leave the score alone.
func (r *Reconciler) reportConflict(ctx context.Context, namespace string, score *clusterv1alpha1.AddOnPlacementScore) (bool, error) {
	ocm := &addonv1alpha1.ManagedClusterAddOn{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: builtinaddon.ResourceUsageCollect}, ocm)
	if client.IgnoreNotFound(err) != nil {
		return false, err
	}
	ocmEnabled := err == nil && ocm.DeletionTimestamp.IsZero()
	mine := &addonv1alpha1.ManagedClusterAddOn{}
	err = r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: Name}, mine)
	if client.IgnoreNotFound(err) != nil {
		return false, err
	}
	haveAddOn := err == nil
	old := meta.FindStatusCondition(mine.Status.Conditions, builtinaddon.ScoreConflictCondition)
	cond, yield := scoreConflict(namespace, score, ocmEnabled, haveAddOn && old != nil)
	if !haveAddOn || cond == nil {
		return yield, nil
	}
	cond.ObservedGeneration = mine.Generation
	if old != nil && old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message && old.ObservedGeneration == cond.ObservedGeneration {
		return yield, nil
	}
	clk := r.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	cond.LastTransitionTime = metav1.NewTime(clk.Now())
	orig := mine.DeepCopy()
	meta.SetStatusCondition(&mine.Status.Conditions, *cond)
	// With the resourceVersion: the agent and the add-on manager write conditions of the same list.
	if err := r.Client.Status().Patch(ctx, mine, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return yield, client.IgnoreNotFound(fmt.Errorf("writing condition %s of ManagedClusterAddOn %s/%s: %w", builtinaddon.ScoreConflictCondition, namespace, Name, err))
	}
	if cond.Status == metav1.ConditionTrue {
		log.FromContext(ctx).Info("two writers of one score: the hub leaves it to the other", "namespace", namespace, "reason", cond.Reason, "message", cond.Message)
	}
	return yield, nil
}
