//go:build integration

package placement

import (
	"context"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{CRDs: true})) }

const wait = 60 * time.Second

// startHub runs the hub (every controller, no webhook) as its generated roles until the test ends.
func startHub(t *testing.T, env *testenv.Env) {
	t.Helper()
	env.StartHub(t, testenv.TestHubOptions())
}

// admin is an uncached administrator's client (system:masters), with watch.
func admin(t *testing.T, env *testenv.Env) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(env.Hub.RESTConfig(), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fleet is a test's own cluster set, bound into its own namespace.
type fleet struct {
	c   client.Client
	ns  string
	set string
}

// newFleet makes a set named set (ExclusiveClusterSetLabel) bound into a new namespace.
func newFleet(t *testing.T, env *testenv.Env, c client.Client, set string) *fleet {
	t.Helper()
	f := &fleet{c: c, ns: env.Namespace(t, env.Hub), set: set}
	create(t, c, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel}}})
	create(t, c, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: set, Namespace: f.ns},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set}})
	return f
}

// cluster makes a ManagedCluster in f's set with the labels given.
func (f *fleet) cluster(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	l := map[string]string{clusterv1beta2.ClusterSetLabel: f.set}
	for k, v := range labels {
		l[k] = v
	}
	create(t, f.c, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}})
}

// create creates obj and deletes it when the test ends.
func create(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), obj) })
}

// update reads obj, applies change and writes it back, again on conflicts.
func update(t *testing.T, c client.Client, obj client.Object, change func()) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		return c.Update(context.Background(), obj)
	})
	if err != nil {
		t.Fatalf("updating %s: %v", obj.GetName(), err)
	}
}

func setLabel(t *testing.T, c client.Client, cluster, key, value string) {
	t.Helper()
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}
	update(t, c, mc, func() {
		if value == "" {
			delete(mc.Labels, key)
		} else {
			mc.Labels[key] = value
		}
	})
}

// decisionView is what a placement's PlacementDecisions say, by name: labels and clusters.
type decisionView map[string]sliceView

type sliceView struct {
	Labels   map[string]string
	Clusters []string
}

func decisions(ctx context.Context, c client.Client, ns, placement string) (decisionView, []clusterv1beta1.PlacementDecision, error) {
	l := &clusterv1beta1.PlacementDecisionList{}
	if err := c.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: placement}); err != nil {
		return nil, nil, err
	}
	v := decisionView{}
	for _, d := range l.Items {
		s := sliceView{Labels: d.Labels, Clusters: []string{}}
		for _, cd := range d.Status.Decisions {
			s.Clusters = append(s.Clusters, cd.ClusterName)
		}
		sort.Strings(s.Clusters)
		v[d.Name] = s
	}
	return v, l.Items, nil
}

// condition shows a condition as Status/Reason, or "missing" when the status does not have it
// for the placement's generation.
func condition(p *clusterv1beta1.Placement, typ string) string {
	c := meta.FindStatusCondition(p.Status.Conditions, typ)
	switch {
	case c == nil:
		return "missing"
	case c.ObservedGeneration != p.Generation:
		return fmt.Sprintf("stale (generation %d, placement at %d)", c.ObservedGeneration, p.Generation)
	}
	return string(c.Status) + "/" + c.Reason
}

func getPlacement(ctx context.Context, c client.Client, ns, name string) (*clusterv1beta1.Placement, error) {
	p := &clusterv1beta1.Placement{}
	return p, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p)
}

func labels(p string, group string, index int) map[string]string {
	return map[string]string{clusterv1beta1.PlacementLabel: p, clusterv1beta1.DecisionGroupNameLabel: group,
		clusterv1beta1.DecisionGroupIndexLabel: fmt.Sprint(index)}
}
