//go:build integration

package sigdecision

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	multiclusterv1alpha1 "github.com/flotilla/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func labelPlacement(ns, name string, match map[string]string) *clusterv1beta1.Placement {
	return &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: clusterv1beta1.PlacementSpec{
		NumberOfClusters: ptr.To[int32](1),
		Tolerations:      testenv.NoAgentTolerations(),
		Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchLabels: match}}}},
	}}
}

// consistently fails the test if cond does not hold at any check over d.
func consistently(t *testing.T, d time.Duration, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	ctx := context.Background()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if ok, state := cond(ctx); !ok {
			t.Fatalf("%s no longer holds: %s", what, state)
		}
	}
}

// TestNameTaken: a SIG PlacementDecision the hub does not control that has the name of a slice
// the hub would write is never changed; the placement's other slices are still mirrored, and
// once it goes, the hub writes its own.
func TestNameTaken(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := admin(t, env)
	startHub(t, env, true)
	f := env.NewBoundSet(t, c, "sig-taken")
	f.Cluster(t, "sig-taken-1", map[string]string{"tier": "main"})
	f.Cluster(t, "sig-taken-2", map[string]string{"tier": "canary"})
	taken := foreign(t, c, f.Namespace, "rollout-decision-2", "rollout", 1)
	testenv.Create(t, c, groupPlacement(f.Namespace, "rollout", intstr.FromInt32(1)))
	// Slice 1 (the canary) is mirrored; slice 2's name is taken, and the user's object stays.
	testenv.WaitFor(t, wait, "the canary slice mirrored", func(ctx context.Context) (bool, string, error) {
		v, err := sigView(ctx, c, f.Namespace, "rollout", taken.Name)
		if err != nil {
			return false, "", err
		}
		s, ok := v["rollout-decision-1"]
		return ok && len(s.Decisions) == 1 && s.Decisions[0].ClusterProfileRef.Name == "sig-taken-2", fmt.Sprintf("%+v", v), nil
	})
	consistently(t, 3*time.Second, "the user's PlacementDecision unchanged", func(ctx context.Context) (bool, string) {
		got := &multiclusterv1alpha1.PlacementDecision{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(taken), got); err != nil {
			return false, err.Error()
		}
		return got.ResourceVersion == taken.ResourceVersion, fmt.Sprintf("%+v", got)
	})
	if err := c.Delete(context.Background(), taken); err != nil {
		t.Fatal(err)
	}
	waitMirror(t, c, f.Namespace, "rollout", slicesAre(map[string][]string{
		"rollout-decision-1": {"sig-taken-2"},
		"rollout-decision-2": {"sig-taken-1"},
	}))
}

// TestFlagOff: without --sig-placement-decisions the hub writes no SIG PlacementDecision.
func TestFlagOff(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := admin(t, env)
	startHub(t, env, false)
	f := env.NewBoundSet(t, c, "sig-off")
	f.Cluster(t, "sig-off-1", map[string]string{"env": "prod"})
	testenv.Create(t, c, labelPlacement(f.Namespace, "off", map[string]string{"env": "prod"}))
	testenv.WaitFor(t, wait, "the OCM PlacementDecisions", func(ctx context.Context) (bool, string, error) {
		ocm, err := ocmSlices(ctx, c, f.Namespace, "off")
		d, ok := ocm["off-decision-1"]
		return ok && slices.Equal(clusterNames(d), []string{"sig-off-1"}), fmt.Sprintf("%+v", ocm), err
	})
	consistently(t, 3*time.Second, "no SIG PlacementDecision", func(ctx context.Context) (bool, string) {
		l := &multiclusterv1alpha1.PlacementDecisionList{}
		if err := c.List(ctx, l, client.InNamespace(f.Namespace)); err != nil {
			return false, err.Error()
		}
		return len(l.Items) == 0, fmt.Sprintf("%d SIG PlacementDecisions, e.g. %+v", len(l.Items), l.Items)
	})
}

// vanishWatcher follows a placement's SIG slices through a watch and records every moment at
// which a cluster it must keep was in none of them.
type vanishWatcher struct {
	mu         sync.Mutex
	slices     map[string][]string
	keep       []string
	armed      bool // once the watch has shown the initial slices
	violations []string
}

func (w *vanishWatcher) apply(typ watch.EventType, d *multiclusterv1alpha1.PlacementDecision) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if typ == watch.Deleted {
		delete(w.slices, d.Name)
	} else {
		var cs []string
		for _, cd := range d.Decisions {
			cs = append(cs, cd.ClusterProfileRef.Name)
		}
		w.slices[d.Name] = cs
	}
	if !w.armed {
		return
	}
	union := map[string]bool{}
	for _, cs := range w.slices {
		for _, c := range cs {
			union[c] = true
		}
	}
	for _, c := range w.keep {
		if !union[c] {
			w.violations = append(w.violations, fmt.Sprintf("after %s of %s (resourceVersion %s): %s in no SIG slice; slices %v",
				typ, d.Name, d.ResourceVersion, c, w.slices))
		}
	}
}

func (w *vanishWatcher) state() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprint(w.slices)
}

// TestNoClusterVanishes: a cluster joins with a name that shifts every slice boundary; no
// cluster that stays selected is ever missing from all the SIG slices.
func TestNoClusterVanishes(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := admin(t, env)
	startHub(t, env, true)
	f := env.NewBoundSet(t, c, "sig-vanish")
	var before []string
	for i := 2; i <= 7; i++ {
		name := fmt.Sprintf("sig-vanish-%d", i)
		f.Cluster(t, name, nil)
		before = append(before, name)
	}
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: "shift"}, Spec: clusterv1beta1.PlacementSpec{
		Tolerations: testenv.NoAgentTolerations(),
		DecisionStrategy: clusterv1beta1.DecisionStrategy{GroupStrategy: clusterv1beta1.GroupStrategy{
			ClustersPerDecisionGroup: intstr.FromInt32(2)}},
	}}
	testenv.Create(t, c, p)
	initial := waitMirror(t, c, f.Namespace, "shift", unionIs(before...))
	t.Logf("before: %v", initial)

	w := &vanishWatcher{slices: map[string][]string{}, keep: before}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wi, err := c.Watch(ctx, &multiclusterv1alpha1.PlacementDecisionList{}, client.InNamespace(f.Namespace),
		client.MatchingLabels{multiclusterv1alpha1.LabelPlacementKey: "shift"})
	if err != nil {
		t.Fatal(err)
	}
	defer wi.Stop()
	go func() {
		for ev := range wi.ResultChan() {
			if d, ok := ev.Object.(*multiclusterv1alpha1.PlacementDecision); ok {
				w.apply(ev.Type, d)
			}
		}
	}()
	// The watch starts with the current slices.
	testenv.WaitFor(t, wait, "the watch's initial slices", func(context.Context) (bool, string, error) {
		return w.state() == fmt.Sprint(asView(initial)), w.state(), nil
	})
	w.mu.Lock()
	w.armed = true
	w.mu.Unlock()
	f.Cluster(t, "sig-vanish-1", nil)
	after := waitMirror(t, c, f.Namespace, "shift", unionIs(append([]string{"sig-vanish-1"}, before...)...))
	t.Logf("after: %v", after)
	testenv.WaitFor(t, wait, "the watch's final slices", func(context.Context) (bool, string, error) {
		return w.state() == fmt.Sprint(asView(after)), w.state(), nil
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.violations) > 0 {
		t.Errorf("%d moments with a still-selected cluster in no SIG slice, first:", len(w.violations))
	}
	for _, v := range w.violations[:min(5, len(w.violations))] {
		t.Error(v)
	}
}

// asView shows SIG slices as the watcher does: clusters by slice name.
func asView(v map[string]sigSlice) map[string][]string {
	out := map[string][]string{}
	for n, s := range v {
		var cs []string
		for _, d := range s.Decisions {
			cs = append(cs, d.ClusterProfileRef.Name)
		}
		out[n] = cs
	}
	return out
}
