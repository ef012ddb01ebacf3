package workreplicaset

import (
	"github.com/flotilla/flotilla/internal/contract/fencing"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla/flotilla/api/work/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/rollout"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func cond(typ string, s metav1.ConditionStatus, gen int64, at time.Time) metav1.Condition {
	return metav1.Condition{Type: typ, Status: s, Reason: "R", ObservedGeneration: gen, LastTransitionTime: metav1.NewTime(at)}
}

func work(gen int64, conds ...metav1.Condition) *workv1.ManifestWork {
	return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "w", Generation: gen}, Status: workv1.ManifestWorkStatus{Conditions: conds}}
}

const (
	yes = metav1.ConditionTrue
	no  = metav1.ConditionFalse
	unk = metav1.ConditionUnknown
)

func TestClusterState(t *testing.T) {
	applied := cond(workv1.WorkApplied, yes, 2, t0)
	cases := map[string]struct {
		work *workv1.ManifestWork
		want rollout.ClusterStatus
	}{
		"no conditions: to apply": {work: work(2), want: rollout.ClusterStatus{Name: "c1", Status: rollout.ToApply}},
		"applied for an older generation: to apply": {
			work: work(3, applied, cond(workv1.WorkProgressing, no, 3, t0)),
			want: rollout.ClusterStatus{Name: "c1", Status: rollout.ToApply}},
		"applied false: to apply": {
			work: work(2, cond(workv1.WorkApplied, no, 2, t0), cond(workv1.WorkProgressing, no, 2, t0)),
			want: rollout.ClusterStatus{Name: "c1", Status: rollout.ToApply}},
		"no progressing yet: to apply": {
			work: work(2, applied),
			want: rollout.ClusterStatus{Name: "c1", Status: rollout.ToApply}},
		"degraded for an older generation: to apply": {
			work: work(2, applied, cond(workv1.WorkProgressing, yes, 2, t0), cond(workv1.WorkDegraded, yes, 1, t0)),
			want: rollout.ClusterStatus{Name: "c1", Status: rollout.ToApply}},
		"progressing": {
			work: work(2, applied, cond(workv1.WorkProgressing, yes, 2, t0.Add(time.Minute))),
			want: rollout.ClusterStatus{Name: "c1", Status: rollout.Progressing, Since: t0.Add(time.Minute)}},
		"progressing and degraded: failed since degraded": {
			work: work(2, applied, cond(workv1.WorkProgressing, yes, 2, t0), cond(workv1.WorkDegraded, yes, 2, t0.Add(time.Hour))),
			want: rollout.ClusterStatus{Name: "c1", Status: rollout.Failed, Since: t0.Add(time.Hour)}},
		"done progressing: succeeded since then": {
			work: work(2, applied, cond(workv1.WorkProgressing, no, 2, t0.Add(time.Second)), cond(workv1.WorkDegraded, no, 2, t0)),
			want: rollout.ClusterStatus{Name: "c1", Status: rollout.Succeeded, Since: t0.Add(time.Second)}},
		"progressing unknown: progressing": {
			work: work(2, applied, cond(workv1.WorkProgressing, unk, 2, t0)),
			want: rollout.ClusterStatus{Name: "c1", Status: rollout.Progressing, Since: t0}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, clusterState(tc.work)); diff != "" {
				t.Errorf("clusterState (-want +got):\n%s", diff)
			}
		})
	}
}

func testSet() *workv1alpha1.ManifestWorkReplicaSet {
	return &workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web.v1", UID: "uid-1", Generation: 3, Labels: map[string]string{"team": "a"}},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{
			Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default"}}`)}}}}}},
	}
}

func TestDesiredWorkAndOwnership(t *testing.T) {
	set := testSet()
	w := desiredWork(set, "c1", "p")
	wantLabels := map[string]string{"team": "a", SetLabel: "apps.web.v1", PlacementLabel: "p"}
	if diff := cmp.Diff(wantLabels, w.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if len(w.OwnerReferences) != 0 {
		t.Errorf("a ManifestWork in another namespace has owner references %v: not allowed across namespaces", w.OwnerReferences)
	}
	if !owns(set, w) {
		t.Error("the set does not own the ManifestWork it made")
	}
	handMade := w.DeepCopy()
	delete(handMade.Annotations, SetUIDAnnotation)
	if owns(set, handMade) {
		t.Error("the set owns a ManifestWork that only carries its label")
	}
	local := desiredWork(set, "apps", "p")
	if ref := metav1.GetControllerOf(local); ref == nil || ref.UID != set.UID || ref.Kind != "ManifestWorkReplicaSet" {
		t.Errorf("the ManifestWork in the set's namespace has controller %+v, want the set", ref)
	}
	if key, ok := setOfLabel(w.Labels[SetLabel]); !ok || key != (types.NamespacedName{Namespace: "apps", Name: "web.v1"}) {
		t.Errorf("setOfLabel(%q) = %v, %t", w.Labels[SetLabel], key, ok)
	}
}

func TestUpToDate(t *testing.T) {
	set := testSet()
	want := desiredWork(set, "c1", "p")
	reformatted := want.DeepCopy()
	reformatted.Spec.Workload.Manifests[0].Raw = []byte(`{"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"namespace": "default", "name": "x"}}`)
	reformatted.Labels["extra"] = "kept"
	if !upToDate(reformatted, want) {
		t.Error("a ManifestWork whose manifests differ only in JSON formatting is out of date")
	}
	changed := want.DeepCopy()
	changed.Spec.Workload.Manifests[0].Raw = []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"y","namespace":"default"}}`)
	if upToDate(changed, want) {
		t.Error("a ManifestWork with another manifest is up to date")
	}
	relabeled := want.DeepCopy()
	relabeled.Labels[PlacementLabel] = "other"
	if upToDate(relabeled, want) {
		t.Error("a ManifestWork labeled for another placement is up to date")
	}
}

func TestDesiredWorkFenced(t *testing.T) {
	set := testSet()
	if w := desiredWork(set, "c1", "p"); fencing.WorkFenced(w.Annotations) {
		t.Errorf("a set without the fenced annotation made a fenced work: %v", w.Annotations)
	}
	set.Annotations = map[string]string{fencing.AnnotationWorkFenced: "true"}
	if w := desiredWork(set, "c1", "p"); !fencing.WorkFenced(w.Annotations) {
		t.Errorf("a fenced set made a work without the fenced annotation: %v", w.Annotations)
	}
}
