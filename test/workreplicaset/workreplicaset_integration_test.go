//go:build integration

package workreplicaset

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla/flotilla/api/work/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/workreplicaset"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

var allAtOnce = clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All, All: &clusterv1alpha1.RolloutAll{RolloutConfig: clusterv1alpha1.RolloutConfig{ProgressDeadline: "None"}}}

const (
	verified  = "PlacementVerified"
	rolledOut = "PlacementRolledOut"
	wkApplied = "ManifestworkApplied"
)

func TestAllStrategy(t *testing.T) {
	f := start(t, "wrs-all")
	for _, c := range []string{"wrs-all-1", "wrs-all-2", "wrs-all-3"} {
		f.set.AgentlessCluster(t, c, map[string]string{"app": "web"})
	}
	f.set.AgentlessPlacement(t, "web", map[string]string{"app": "web"})
	s := f.replicaSet(t, "web", "web", allAtOnce, workv1alpha1.Background)

	items := f.waitWorks(t, s, "wrs-all-1", "wrs-all-2", "wrs-all-3")
	for _, w := range items {
		if w.Name != "web" || w.Labels[workreplicaset.PlacementLabel] != "web" || len(w.OwnerReferences) != 0 {
			t.Errorf("ManifestWork %s/%s: name, placement label %q, owners %v; want web, web, none (across namespaces)",
				w.Namespace, w.Name, w.Labels[workreplicaset.PlacementLabel], w.OwnerReferences)
		}
		if diff := cmp.Diff(s.Spec.ManifestWorkTemplate.Workload.Manifests[0].Raw, w.Spec.Workload.Manifests[0].Raw); diff != "" {
			t.Errorf("ManifestWork %s/%s's manifest (-template +work):\n%s", w.Namespace, w.Name, diff)
		}
	}
	got := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := f.c.Get(context.Background(), client.ObjectKeyFromObject(s), got); err != nil {
		t.Fatal(err)
	}
	if !controllerutil.ContainsFinalizer(got, workreplicaset.Finalizer) {
		t.Errorf("the set has finalizers %v, want %s", got.Finalizers, workreplicaset.Finalizer)
	}
	f.waitConditions(t, s, map[string]string{verified: "True/AsExpected", rolledOut: "False/Progressing", wkApplied: "False/NotAsExpected"}, nil)

	for _, c := range []string{"wrs-all-1", "wrs-all-2", "wrs-all-3"} {
		f.report(t, c, "web", succeeded)
	}
	got = f.waitConditions(t, s, map[string]string{verified: "True/AsExpected", rolledOut: "True/Complete", wkApplied: "True/AsExpected"}, nil)
	want := workv1alpha1.ManifestWorkReplicaSetSummary{Total: 3, DesiredTotal: 3, Applied: 3, Available: 3, Updated: 3}
	if diff := cmp.Diff(want, got.Status.Summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	wantPlacements := []workv1alpha1.PlacementSummary{{Name: "web", AvailableDecisionGroups: "1/1", Summary: want}}
	if diff := cmp.Diff(wantPlacements, got.Status.PlacementsSummary); diff != "" {
		t.Errorf("placementSummary (-want +got):\n%s", diff)
	}

	// A template change reaches every cluster.
	testenv.Update(t, f.c, got, func() { got.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{configMap("app-v2")} })
	testenv.WaitFor(t, wait, "every ManifestWork to have the new template", func(ctx context.Context) (bool, string, error) {
		_, items, err := f.works(ctx, s)
		n := 0
		for _, w := range items {
			if strings.Contains(string(w.Spec.Workload.Manifests[0].Raw), "app-v2") {
				n++
			}
		}
		return n == 3, f.status(ctx, s), err
	})
	f.waitConditions(t, s, map[string]string{rolledOut: "False/Progressing"}, nil)
}

func TestProgressiveWithAFailingCluster(t *testing.T) {
	f := start(t, "wrs-prog")
	clusters := []string{"wrs-prog-1", "wrs-prog-2", "wrs-prog-3"}
	for _, c := range clusters {
		f.set.AgentlessCluster(t, c, map[string]string{"app": "api"})
	}
	f.set.AgentlessPlacement(t, "api", map[string]string{"app": "api"})
	const deadline = 4 * time.Second
	s := f.replicaSet(t, "api", "api", clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{
		RolloutConfig:  clusterv1alpha1.RolloutConfig{ProgressDeadline: "4s", MaxFailures: intstr.FromInt32(1)},
		MaxConcurrency: intstr.FromInt32(1),
	}}, workv1alpha1.Background)

	// One cluster at a time, by name.
	f.waitWorks(t, s, "wrs-prog-1")
	f.report(t, "wrs-prog-1", "api", succeeded)
	f.waitWorks(t, s, "wrs-prog-1", "wrs-prog-2")

	// wrs-prog-2 fails: it keeps its slot until progressDeadline, then counts as one failure,
	// which maxFailures 1 tolerates, and the rollout moves on.
	f.report(t, "wrs-prog-2", "api", failing)
	failedAt := time.Now()
	f.waitConditions(t, s, map[string]string{rolledOut: "False/Progressing"}, func(got *workv1alpha1.ManifestWorkReplicaSet) string {
		if m := message(got, rolledOut); !strings.Contains(m, "failed: wrs-prog-2") {
			return "\nPlacementRolledOut does not say wrs-prog-2 failed"
		}
		return ""
	})
	f.waitWorks(t, s, "wrs-prog-1", "wrs-prog-2", "wrs-prog-3")
	// Condition times have a resolution of a second.
	if took := time.Since(failedAt); took < deadline-time.Second {
		t.Errorf("wrs-prog-3 got its ManifestWork %s after wrs-prog-2 failed, before progressDeadline (%s) ran out", took, deadline)
	}

	// A second failure is more than maxFailures allows: the rollout stops.
	f.report(t, "wrs-prog-3", "api", failing)
	got := f.waitConditions(t, s, map[string]string{verified: "True/AsExpected", rolledOut: "False/Progressing", wkApplied: "False/NotAsExpected"},
		func(got *workv1alpha1.ManifestWorkReplicaSet) string {
			m := message(got, rolledOut)
			if !strings.Contains(m, "stopped") || !strings.Contains(m, "timed out (progressDeadline): wrs-prog-2, wrs-prog-3") {
				return "\nPlacementRolledOut does not say the rollout stopped with wrs-prog-2 and wrs-prog-3 timed out"
			}
			return ""
		})
	want := workv1alpha1.ManifestWorkReplicaSetSummary{Total: 3, DesiredTotal: 3, Applied: 3, Available: 1, Progressing: 2, Degraded: 2, Updated: 3}
	if diff := cmp.Diff(want, got.Status.Summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}

	// A fourth cluster joins the placement: a stopped rollout does not start it.
	f.set.AgentlessCluster(t, "wrs-prog-4", map[string]string{"app": "api"})
	f.waitConditions(t, s, map[string]string{verified: "True/AsExpected"}, func(got *workv1alpha1.ManifestWorkReplicaSet) string {
		if got.Status.Summary.DesiredTotal != 4 {
			return "\nthe set does not see the fourth cluster yet"
		}
		return ""
	})
	time.Sleep(2 * time.Second)
	if got, _, err := f.works(context.Background(), s); err != nil || !cmp.Equal(got, []string{"wrs-prog-1", "wrs-prog-2", "wrs-prog-3"}) {
		t.Errorf("after the rollout stopped, ManifestWorks are in %v (%v), want only the first three clusters", got, err)
	}

	// The failed clusters recover: the rollout goes on.
	f.report(t, "wrs-prog-2", "api", succeeded)
	f.report(t, "wrs-prog-3", "api", succeeded)
	f.waitWorks(t, s, clusters[0], clusters[1], clusters[2], "wrs-prog-4")
}

func TestDecisionChanges(t *testing.T) {
	f := start(t, "wrs-dc")
	f.set.AgentlessCluster(t, "wrs-dc-1", map[string]string{"env": "prod"})
	f.set.AgentlessCluster(t, "wrs-dc-2", map[string]string{"env": "prod"})
	f.set.AgentlessCluster(t, "wrs-dc-3", map[string]string{"env": "dev"})
	f.set.AgentlessPlacement(t, "prod", map[string]string{"env": "prod"})
	s := f.replicaSet(t, "app", "prod", allAtOnce, workv1alpha1.Background)
	f.waitWorks(t, s, "wrs-dc-1", "wrs-dc-2")

	setEnv := func(cluster, env string) {
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}
		testenv.Update(t, f.c, mc, func() { mc.Labels["env"] = env })
	}
	setEnv("wrs-dc-3", "prod")
	f.waitWorks(t, s, "wrs-dc-1", "wrs-dc-2", "wrs-dc-3")
	setEnv("wrs-dc-1", "dev")
	f.waitWorks(t, s, "wrs-dc-2", "wrs-dc-3")
	f.waitConditions(t, s, map[string]string{verified: "True/AsExpected"}, func(got *workv1alpha1.ManifestWorkReplicaSet) string {
		if got.Status.Summary.Total != 2 || got.Status.Summary.DesiredTotal != 2 {
			return "\nthe summary does not count the two clusters left"
		}
		return ""
	})

	// No cluster left: every ManifestWork goes and the status says the placement is empty.
	setEnv("wrs-dc-2", "dev")
	setEnv("wrs-dc-3", "dev")
	f.waitWorks(t, s)
	f.waitConditions(t, s, map[string]string{verified: "False/PlacementDecisionEmpty", wkApplied: "False/PlacementDecisionEmpty"}, nil)
}

// handMade creates a ManifestWork that carries s's label but was not made by the controller.
func (f *fleet) handMade(t *testing.T, s *workv1alpha1.ManifestWorkReplicaSet, ns, name string) *workv1.ManifestWork {
	t.Helper()
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{workreplicaset.SetLabel: setLabel(s)}},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{configMap("hand-made")}}}}
	testenv.Create(t, f.c, w)
	return w
}

func TestDeletionCascadesToOwnWorksOnly(t *testing.T) {
	f := start(t, "wrs-del")
	for _, c := range []string{"wrs-del-1", "wrs-del-2", "wrs-del-3"} {
		f.set.AgentlessCluster(t, c, map[string]string{"del": "yes"})
	}
	f.set.AgentlessCluster(t, "wrs-del-other", nil)
	f.set.AgentlessPlacement(t, "p", map[string]string{"del": "yes"})
	// The set's name is taken in wrs-del-3 by a hand-made ManifestWork before the set exists, and
	// another hand-made one carries the set's label in a cluster the placement does not select.
	ghost := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: f.set.Namespace, Name: "bg"}}
	squatter := f.handMade(t, ghost, "wrs-del-3", "bg")
	stray := f.handMade(t, ghost, "wrs-del-other", "bg-copy")

	s := f.replicaSet(t, "bg", "p", allAtOnce, workv1alpha1.Background)
	f.waitWorks(t, s, "wrs-del-1", "wrs-del-2", "wrs-del-3", "wrs-del-other")
	f.waitConditions(t, s, map[string]string{rolledOut: "False/Progressing"}, func(got *workv1alpha1.ManifestWorkReplicaSet) string {
		if !strings.Contains(message(got, rolledOut), "wrs-del-3/bg") {
			return "\nPlacementRolledOut does not name the ManifestWork in the way"
		}
		return ""
	})
	for _, w := range []*workv1.ManifestWork{squatter, stray} {
		got := &workv1.ManifestWork{}
		if err := f.c.Get(context.Background(), client.ObjectKeyFromObject(w), got); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(got.Spec.Workload.Manifests[0].Raw), "hand-made") || got.Annotations[workreplicaset.SetUIDAnnotation] != "" {
			t.Errorf("the hand-made ManifestWork %s/%s was taken over: %s, annotations %v", w.Namespace, w.Name, got.Spec.Workload.Manifests[0].Raw, got.Annotations)
		}
	}

	// Background: the set goes at once, its own ManifestWorks after it, the hand-made ones stay.
	if err := f.c.Delete(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	f.waitWorks(t, s, "wrs-del-3", "wrs-del-other")
	testenv.WaitFor(t, wait, "the set to be gone", func(ctx context.Context) (bool, string, error) {
		err := f.c.Get(ctx, client.ObjectKeyFromObject(s), &workv1alpha1.ManifestWorkReplicaSet{})
		return apierrors.IsNotFound(err), "still there", client.IgnoreNotFound(err)
	})

	// Foreground: the set stays until its ManifestWorks are gone.
	fg := f.replicaSet(t, "fg", "p", allAtOnce, workv1alpha1.Foreground)
	items := f.waitWorks(t, fg, "wrs-del-1", "wrs-del-2", "wrs-del-3")
	held := &items[0]
	testenv.Update(t, f.c, held, func() { held.Finalizers = append(held.Finalizers, "test.flotilla.io/hold") })
	if err := f.c.Delete(context.Background(), fg); err != nil {
		t.Fatal(err)
	}
	f.waitWorks(t, fg, held.Namespace)
	time.Sleep(time.Second)
	got := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := f.c.Get(context.Background(), client.ObjectKeyFromObject(fg), got); err != nil || got.DeletionTimestamp.IsZero() {
		t.Fatalf("the Foreground set is gone or not deleting while ManifestWork %s/%s is still there: %v", held.Namespace, held.Name, err)
	}
	testenv.Update(t, f.c, held, func() { held.Finalizers = nil })
	f.waitWorks(t, fg)
	testenv.WaitFor(t, wait, "the Foreground set to be gone", func(ctx context.Context) (bool, string, error) {
		err := f.c.Get(ctx, client.ObjectKeyFromObject(fg), &workv1alpha1.ManifestWorkReplicaSet{})
		return apierrors.IsNotFound(err), "still there", client.IgnoreNotFound(err)
	})
}

func TestMissingPlacement(t *testing.T) {
	f := start(t, "wrs-missing")
	s := f.replicaSet(t, "orphan", "no-such-placement", allAtOnce, workv1alpha1.Background)
	f.waitConditions(t, s, map[string]string{verified: "False/PlacementDecisionNotFound"}, func(got *workv1alpha1.ManifestWorkReplicaSet) string {
		if m := message(got, verified); !strings.Contains(m, `"no-such-placement"`) || !strings.Contains(m, "spec.placementRefs[0].name") {
			return "\nthe message does not name the placement and the field: " + m
		}
		return ""
	})
	// Once the placement exists, the set goes on.
	f.set.AgentlessCluster(t, "wrs-missing-1", map[string]string{"late": "yes"})
	f.set.AgentlessPlacement(t, "no-such-placement", map[string]string{"late": "yes"})
	f.waitWorks(t, s, "wrs-missing-1")
	f.waitConditions(t, s, map[string]string{verified: "True/AsExpected"}, nil)
}
