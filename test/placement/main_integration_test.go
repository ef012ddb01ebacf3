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
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/local/testenv"
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

func setLabel(t *testing.T, c client.Client, cluster, key, value string) {
	t.Helper()
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}
	testenv.Update(t, c, mc, func() {
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
