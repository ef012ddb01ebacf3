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
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	multiclusterv1alpha1 "github.com/flotilla/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/local/testenv"
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
