//go:build integration

package sigdecision

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	multiclusterv1alpha1 "github.com/flotilla/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{CRDs: true})) }

const wait = 60 * time.Second

// startHub runs the hub as its generated roles until the test ends, mirroring SIG
// PlacementDecisions when mirror is true.
func startHub(t *testing.T, env *testenv.Env, mirror bool) {
	t.Helper()
	opts := testenv.TestHubOptions()
	opts.MirrorSIGDecisions = mirror
	env.StartHub(t, opts)
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
	testenv.Create(t, c, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel}}})
	testenv.Create(t, c, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: set, Namespace: f.ns},
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
	testenv.Create(t, f.c, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}})
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

// tolerateNoAgent tolerates the taints the hub puts on clusters without a running agent, as the
// test's clusters are.
var tolerateNoAgent = []clusterv1beta1.Toleration{
	{Key: clusterv1.ManagedClusterTaintUnreachable, Operator: clusterv1beta1.TolerationOpExists},
	{Key: clusterv1.ManagedClusterTaintUnavailable, Operator: clusterv1beta1.TolerationOpExists},
}

// sigSlice is what a SIG PlacementDecision says.
type sigSlice struct {
	Labels        map[string]string
	SchedulerName string
	Decisions     []multiclusterv1alpha1.ClusterDecision
	Controlled    bool // by the placement
}

// sigLabels are the labels the mirror gives the index-th slice of placement p.
func sigLabels(p string, index int) map[string]string {
	return map[string]string{
		clusterv1beta1.PlacementLabel:           p,
		multiclusterv1alpha1.LabelPlacementKey:  p,
		multiclusterv1alpha1.LabelDecisionKey:   p,
		multiclusterv1alpha1.LabelDecisionIndex: fmt.Sprint(index),
	}
}

// sigView lists the SIG PlacementDecisions with placement-key p in ns, by name, except those named
// in skip, showing only the labels the mirror sets.
func sigView(ctx context.Context, c client.Client, ns, p string, skip ...string) (map[string]sigSlice, error) {
	l := &multiclusterv1alpha1.PlacementDecisionList{}
	if err := c.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{multiclusterv1alpha1.LabelPlacementKey: p}); err != nil {
		return nil, err
	}
	v := map[string]sigSlice{}
	for _, d := range l.Items {
		if slices.Contains(skip, d.Name) {
			continue
		}
		ref := metav1.GetControllerOf(&d)
		labels := map[string]string{}
		for k := range sigLabels(p, 0) {
			if val, ok := d.Labels[k]; ok {
				labels[k] = val
			}
		}
		v[d.Name] = sigSlice{Labels: labels, SchedulerName: d.SchedulerName, Decisions: d.Decisions,
			Controlled: ref != nil && ref.Kind == "Placement" && ref.Name == p}
	}
	return v, nil
}

// ocmSlices lists placement p's OCM PlacementDecisions in ns, by name.
func ocmSlices(ctx context.Context, c client.Client, ns, p string) (map[string]clusterv1beta1.PlacementDecision, error) {
	l := &clusterv1beta1.PlacementDecisionList{}
	if err := c.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: p}); err != nil {
		return nil, err
	}
	out := map[string]clusterv1beta1.PlacementDecision{}
	for _, d := range l.Items {
		out[d.Name] = d
	}
	return out, nil
}

func clusterNames(d clusterv1beta1.PlacementDecision) []string {
	var out []string
	for _, cd := range d.Status.Decisions {
		out = append(out, cd.ClusterName)
	}
	return out
}
