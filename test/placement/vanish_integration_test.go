//go:build integration

package placement

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// unionWatcher follows a placement's PlacementDecisions through a watch and records every moment
// at which a cluster it must keep was in none of them.
type unionWatcher struct {
	mu     sync.Mutex
	slices map[string][]string // PlacementDecision name -> clusters
	// mustKeep are clusters that, once seen, must never vanish; dropped may vanish.
	mustKeep   map[string]bool
	dropped    map[string]bool
	violations []string
	events     int
}

func (w *unionWatcher) union() map[string]bool {
	u := map[string]bool{}
	for _, cs := range w.slices {
		for _, c := range cs {
			u[c] = true
		}
	}
	return u
}

func (w *unionWatcher) apply(typ watch.EventType, d *clusterv1beta1.PlacementDecision) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events++
	if typ == watch.Deleted {
		delete(w.slices, d.Name)
	} else {
		var cs []string
		for _, cd := range d.Status.Decisions {
			cs = append(cs, cd.ClusterName)
		}
		w.slices[d.Name] = cs
	}
	u := w.union()
	var gone []string
	for c := range w.mustKeep {
		if !u[c] && !w.dropped[c] {
			gone = append(gone, c)
		}
	}
	if len(gone) > 0 {
		sort.Strings(gone)
		w.violations = append(w.violations, fmt.Sprintf("after %s of %s (resourceVersion %s): %d still-selected clusters in no PlacementDecision, e.g. %v",
			typ, d.Name, d.ResourceVersion, len(gone), gone[:min(3, len(gone))]))
	}
	for c := range u {
		if !w.dropped[c] {
			w.mustKeep[c] = true
		}
	}
}

// drop says that clusters may leave the decisions from now on.
func (w *unionWatcher) drop(clusters ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range clusters {
		w.dropped[c] = true
	}
}

// TestNoClusterVanishes watches the PlacementDecisions of a 250-cluster placement while clusters
// join with names that shift every slice boundary and others leave, and checks that no cluster
// that stays selected is ever missing from all of them.
func TestNoClusterVanishes(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := admin(t, env)
	startHub(t, env)
	f := env.NewBoundSet(t, c, "pl-many")
	var all []string
	for i := 0; i < 250; i++ {
		name := fmt.Sprintf("pl-many-m%03d", i)
		f.Cluster(t, name, map[string]string{"use": "yes"})
		all = append(all, name)
	}
	p := labelPlacement(f.Namespace, "many", 0, map[string]string{"use": "yes"})
	p.Spec.NumberOfClusters = nil // every matching cluster
	testenv.Create(t, c, p)
	want := func(names []string) decisionView {
		names = append([]string(nil), names...)
		sort.Strings(names)
		v := decisionView{}
		for i := 0; i*100 < len(names); i++ {
			v[clusterv1beta1.PlacementDecisionName("many", i+1)] = sliceView{Labels: labels("many", "", 0), Clusters: names[i*100 : min((i+1)*100, len(names))]}
		}
		return v
	}
	waitDecisions(t, c, f.Namespace, "many", want(all))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	list := &clusterv1beta1.PlacementDecisionList{}
	sel := client.MatchingLabels{clusterv1beta1.PlacementLabel: "many"}
	if err := c.List(ctx, list, client.InNamespace(f.Namespace), sel); err != nil {
		t.Fatal(err)
	}
	w := &unionWatcher{slices: map[string][]string{}, mustKeep: map[string]bool{}, dropped: map[string]bool{}}
	for i := range list.Items {
		w.apply(watch.Added, &list.Items[i])
	}
	wi, err := c.Watch(ctx, &clusterv1beta1.PlacementDecisionList{}, client.InNamespace(f.Namespace), sel,
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		t.Fatal(err)
	}
	defer wi.Stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range wi.ResultChan() {
			if d, ok := ev.Object.(*clusterv1beta1.PlacementDecision); ok {
				w.apply(ev.Type, d)
			} else if ev.Type == watch.Error && ctx.Err() == nil { // not the stream closing at the end
				w.mu.Lock()
				w.violations = append(w.violations, fmt.Sprintf("watch error: %v", ev.Object))
				w.mu.Unlock()
				return
			}
		}
	}()

	// Rounds of change: clusters join with names that sort first (every boundary shifts towards
	// the end), clusters leave from the front (boundaries shift back), and both at once.
	selected := append([]string(nil), all...)
	remove := func(names ...string) {
		names = append([]string(nil), names...)
		w.drop(names...)
		for _, n := range names {
			setLabel(t, c, n, "use", "")
		}
		keep := selected[:0]
		for _, s := range selected {
			if !contains(names, s) {
				keep = append(keep, s)
			}
		}
		selected = keep
	}
	add := func(prefix string, n int) {
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("pl-many-%s%03d", prefix, i)
			f.Cluster(t, name, map[string]string{"use": "yes"})
			selected = append(selected, name)
		}
	}
	start := time.Now()
	add("a", 30)
	waitDecisions(t, c, f.Namespace, "many", want(selected))
	sort.Strings(selected)
	remove(selected[:45]...) // from the front: the a-clusters and some m-clusters
	waitDecisions(t, c, f.Namespace, "many", want(selected))
	add("b", 60) // back to 295: a third slice grows, boundaries shift forward again
	remove("pl-many-m100", "pl-many-m150")
	waitDecisions(t, c, f.Namespace, "many", want(selected))
	elapsed := time.Since(start)
	time.Sleep(time.Second) // let the last events arrive
	cancel()
	wi.Stop()
	<-done

	w.mu.Lock()
	defer w.mu.Unlock()
	t.Logf("%d watch events over %s of changes; %d clusters selected at the end", w.events, elapsed.Round(time.Millisecond), len(selected))
	if w.events == 0 {
		t.Fatal("the watch saw no event: the test proves nothing")
	}
	for _, v := range w.violations {
		t.Error(v)
	}
}

func contains(names []string, s string) bool {
	for _, n := range names {
		if n == s {
			return true
		}
	}
	return false
}
