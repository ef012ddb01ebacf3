package workreplicaset

import (
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla/flotilla/api/work/v1alpha1"
	"github.com/flotilla/flotilla/internal/contract/fencing"
	"github.com/flotilla/flotilla/internal/core/rollout"
)

const (
	// SetLabel on a ManifestWork names the ManifestWorkReplicaSet that made it, as
	// <namespace>.<name> (OCM's label).
	SetLabel = "work.open-cluster-management.io/manifestworkreplicaset"
	// PlacementLabel on a ManifestWork names the Placement (of the set's placementRefs) that chose
	// its cluster (OCM's label).
	PlacementLabel = "work.open-cluster-management.io/placementname"
	// SetUIDAnnotation on a ManifestWork holds the UID of the ManifestWorkReplicaSet that created
	// it. Labels can be copied by anyone; a ManifestWork is the set's own only with both, so that a
	// hand-made ManifestWork carrying the label is never updated or deleted.
	SetUIDAnnotation = "work.flotilla.io/manifestworkreplicaset-uid"
	// Finalizer keeps a ManifestWorkReplicaSet until its ManifestWorks are deleted (OCM's name).
	Finalizer = "work.open-cluster-management.io/manifest-work-cleanup"
)

// setKey is the SetLabel value of set.
func setKey(set *workv1alpha1.ManifestWorkReplicaSet) string {
	return set.Namespace + "." + set.Name
}

// setOfLabel turns a SetLabel value back into the set's key. A namespace has no dots, so the
// first one ends it (a name may have dots).
func setOfLabel(v string) (types.NamespacedName, bool) {
	ns, name, ok := strings.Cut(v, ".")
	if !ok || ns == "" || name == "" {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: ns, Name: name}, true
}

// owns says whether w is set's own: it carries set's label and UID.
func owns(set *workv1alpha1.ManifestWorkReplicaSet, w *workv1.ManifestWork) bool {
	return w.Labels[SetLabel] == setKey(set) && w.Annotations[SetUIDAnnotation] == string(set.UID)
}

// desiredWork is the ManifestWork set wants in cluster's namespace for placement: the template,
// the set's labels plus OCM's two, the UID annotation, and the fenced annotation when the set
// has it. A controller reference is legal only
// in the set's own namespace (an owner in another namespace would make the garbage collector
// delete the ManifestWork at once), so only there does the set become the controller; elsewhere
// the label, the annotation and the set's finalizer cascade the deletion.
func desiredWork(set *workv1alpha1.ManifestWorkReplicaSet, cluster, placement string) *workv1.ManifestWork {
	labels := maps.Clone(set.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[SetLabel] = setKey(set)
	labels[PlacementLabel] = placement
	w := &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{
			Name: set.Name, Namespace: cluster, Labels: labels,
			Annotations: map[string]string{SetUIDAnnotation: string(set.UID)},
		},
		Spec: *set.Spec.ManifestWorkTemplate.DeepCopy(),
	}
	// A fenced set's works are fenced (internal/contract/fencing): stopped on a cluster cut off from the
	// hub before the placement moves them.
	if fencing.WorkFenced(set.Annotations) {
		w.Annotations[fencing.AnnotationWorkFenced] = "true"
	}
	if cluster == set.Namespace {
		w.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(set, workv1alpha1.GroupVersion.WithKind("ManifestWorkReplicaSet"))}
	}
	return w
}

// upToDate says whether w already is want: same spec (compared as JSON values, so that the API
// server's reformatting of manifests does not count), labels and annotations of want present.
func upToDate(w, want *workv1.ManifestWork) bool {
	for k, v := range want.Labels {
		if w.Labels[k] != v {
			return false
		}
	}
	for k, v := range want.Annotations {
		if w.Annotations[k] != v {
			return false
		}
	}
	return workv1.SameSpec(&w.Spec, &want.Spec)
}

// clusterState is the rollout state of a ManifestWork that has the current template, from its
// conditions, as OCM reads them: ToApply until the agent reports Applied=True and Progressing
// (and Degraded, if present) for the work's generation; then Progressing=True with Degraded=True
// is Failed (since Degraded's transition), Progressing=True is Progressing and
// Progressing=False Succeeded (since Progressing's transition), anything else Progressing.
func clusterState(w *workv1.ManifestWork) rollout.ClusterStatus {
	st := rollout.ClusterStatus{Name: w.Namespace, Status: rollout.ToApply}
	conds := w.Status.Conditions
	applied := meta.FindStatusCondition(conds, workv1.WorkApplied)
	progressing := meta.FindStatusCondition(conds, workv1.WorkProgressing)
	degraded := meta.FindStatusCondition(conds, workv1.WorkDegraded)
	current := func(c *metav1.Condition) bool { return c != nil && c.ObservedGeneration == w.Generation }
	if !current(applied) || applied.Status != metav1.ConditionTrue || !current(progressing) ||
		(degraded != nil && !current(degraded)) {
		return st
	}
	switch {
	case progressing.Status == metav1.ConditionTrue && degraded != nil && degraded.Status == metav1.ConditionTrue:
		st.Status, st.Since = rollout.Failed, degraded.LastTransitionTime.Time
	case progressing.Status == metav1.ConditionFalse:
		st.Status, st.Since = rollout.Succeeded, progressing.LastTransitionTime.Time
	default:
		st.Status, st.Since = rollout.Progressing, progressing.LastTransitionTime.Time
	}
	return st
}
