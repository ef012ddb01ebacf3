package workreplicaset

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla/flotilla/api/work/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/rollout"
)

// show is a condition as Status/Reason.
func show(st workv1alpha1.ManifestWorkReplicaSetStatus) map[string]string {
	out := map[string]string{}
	for _, c := range st.Conditions {
		out[c.Type] = string(c.Status) + "/" + c.Reason
	}
	return out
}

func TestDesiredStatus(t *testing.T) {
	set := testSet()
	g0, g1 := rollout.GroupKey{Index: 0}, rollout.GroupKey{Index: 1}
	clusters := []rollout.Cluster{{Name: "c1", Group: g0}, {Name: "c2", Group: g0}, {Name: "c3", Group: g1}}
	done := func(c string) *workv1.ManifestWork {
		w := desiredWork(set, c, "p")
		w.Generation = 1
		w.Status.Conditions = []metav1.Condition{cond(workv1.WorkApplied, yes, 1, t0), cond(workv1.WorkAvailable, yes, 1, t0),
			cond(workv1.WorkProgressing, no, 1, t0), cond(workv1.WorkDegraded, no, 1, t0)}
		return w
	}
	failing := func(c string) *workv1.ManifestWork {
		w := desiredWork(set, c, "p")
		w.Generation = 1
		w.Status.Conditions = []metav1.Condition{cond(workv1.WorkApplied, yes, 1, t0), cond(workv1.WorkProgressing, yes, 1, t0), cond(workv1.WorkDegraded, yes, 1, t0)}
		return w
	}
	cases := map[string]struct {
		refs        []refOutcome
		works       map[string]*workv1.ManifestWork
		wantConds   map[string]string
		wantSummary workv1alpha1.ManifestWorkReplicaSetSummary
		wantGroups  string
	}{
		"every cluster done": {
			refs:        []refOutcome{{Name: "p", Clusters: clusters}},
			works:       map[string]*workv1.ManifestWork{"c1": done("c1"), "c2": done("c2"), "c3": done("c3")},
			wantConds:   map[string]string{"PlacementVerified": "True/AsExpected", "PlacementRolledOut": "True/Complete", "ManifestworkApplied": "True/AsExpected"},
			wantSummary: workv1alpha1.ManifestWorkReplicaSetSummary{Total: 3, DesiredTotal: 3, Applied: 3, Available: 3, Updated: 3},
			wantGroups:  "2/2",
		},
		"one group done, one cluster failing": {
			refs:        []refOutcome{{Name: "p", Clusters: clusters}},
			works:       map[string]*workv1.ManifestWork{"c1": done("c1"), "c2": done("c2"), "c3": failing("c3")},
			wantConds:   map[string]string{"PlacementVerified": "True/AsExpected", "PlacementRolledOut": "False/Progressing", "ManifestworkApplied": "False/NotAsExpected"},
			wantSummary: workv1alpha1.ManifestWorkReplicaSetSummary{Total: 3, DesiredTotal: 3, Applied: 3, Available: 2, Progressing: 1, Degraded: 1, Updated: 3},
			wantGroups:  "1/2",
		},
		"first cluster progressing, the rest not started": {
			refs: []refOutcome{{Name: "p", Clusters: clusters}},
			works: map[string]*workv1.ManifestWork{"c1": func() *workv1.ManifestWork {
				w := failing("c1")
				w.Status.Conditions = w.Status.Conditions[:2]
				return w
			}()},
			wantConds:   map[string]string{"PlacementVerified": "True/AsExpected", "PlacementRolledOut": "False/Progressing", "ManifestworkApplied": "False/Processing"},
			wantSummary: workv1alpha1.ManifestWorkReplicaSetSummary{Total: 1, DesiredTotal: 3, Applied: 1, Progressing: 1, Updated: 1},
			wantGroups:  "0/2",
		},
		"no cluster selected": {
			refs:       []refOutcome{{Name: "p"}},
			wantConds:  map[string]string{"PlacementVerified": "False/PlacementDecisionEmpty", "PlacementRolledOut": "True/Complete", "ManifestworkApplied": "False/PlacementDecisionEmpty"},
			wantGroups: "0/0",
		},
		"a bad strategy": {
			refs:        []refOutcome{{Name: "p", Clusters: clusters, Err: "spec.placementRefs[0] (p): bad"}},
			wantConds:   map[string]string{"PlacementVerified": "False/NotAsExpected", "PlacementRolledOut": "False/Progressing", "ManifestworkApplied": "False/NotAsExpected"},
			wantSummary: workv1alpha1.ManifestWorkReplicaSetSummary{DesiredTotal: 3},
			wantGroups:  "0/2",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := view{works: tc.works, current: map[string]bool{}}
			for c := range tc.works {
				v.current[c] = true
			}
			got := desiredStatus(set, tc.refs, v, metav1.NewTime(t0))
			if diff := cmp.Diff(tc.wantConds, show(got)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSummary, got.Summary); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			if got.PlacementsSummary[0].AvailableDecisionGroups != tc.wantGroups {
				t.Errorf("availableDecisionGroups %q, want %q", got.PlacementsSummary[0].AvailableDecisionGroups, tc.wantGroups)
			}
			for _, c := range got.Conditions {
				if c.ObservedGeneration != set.Generation {
					t.Errorf("condition %s has observedGeneration %d, want %d", c.Type, c.ObservedGeneration, set.Generation)
				}
			}
		})
	}
}

func TestNotFoundStatusNamesThePlacement(t *testing.T) {
	got := notFoundStatus(testSet(), "missing", 1, metav1.NewTime(t0))
	c := got.Conditions[0]
	want := `Placement "missing" (spec.placementRefs[1].name) does not exist in namespace apps: create it or name an existing Placement`
	if c.Reason != workv1alpha1.ReasonPlacementDecisionNotFound || c.Status != metav1.ConditionFalse || c.Message != want {
		t.Errorf("PlacementVerified = %s/%s %q, want False/%s %q", c.Status, c.Reason, c.Message, workv1alpha1.ReasonPlacementDecisionNotFound, want)
	}
}
