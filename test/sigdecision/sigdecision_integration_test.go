//go:build integration

package sigdecision

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	multiclusterv1alpha1 "github.com/flotilla/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/sigdecision"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// ocmCheck says whether a placement's OCM slices, in name order, are the ones a test waits for.
type ocmCheck func(names []string, clusters [][]string) bool

// slicesAre waits for OCM slices with these names holding these clusters (in any order).
func slicesAre(want map[string][]string) ocmCheck {
	return func(names []string, clusters [][]string) bool {
		got := map[string][]string{}
		for i, n := range names {
			got[n] = slices.Sorted(slices.Values(clusters[i]))
		}
		return cmp.Equal(want, got)
	}
}

// unionIs waits for OCM slices holding exactly these clusters between them.
func unionIs(want ...string) ocmCheck {
	return func(_ []string, clusters [][]string) bool {
		return cmp.Equal(slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(slices.Concat(clusters...))))
	}
}

// waitMirror waits until placement ns/p's OCM slices pass check and its SIG slices (but those
// named in skip) mirror them: the same names; the labels of index i for the i-th OCM slice in
// name order (tests keep under ten slices, so name order is number order); schedulerName
// flotilla; and each OCM decision, in order, as a reference to the cluster's ClusterProfile in ns
// with the same non-empty reason. It returns the SIG slices.
func waitMirror(t *testing.T, c client.Client, ns, p string, check ocmCheck, skip ...string) map[string]sigSlice {
	t.Helper()
	var got map[string]sigSlice
	testenv.WaitFor(t, wait, fmt.Sprintf("the SIG PlacementDecisions of %s/%s", ns, p), func(ctx context.Context) (bool, string, error) {
		ocm, err := ocmSlices(ctx, c, ns, p)
		if err != nil {
			return false, "", err
		}
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range ocm {
				if !yield(n) {
					return
				}
			}
		})
		var clusters [][]string
		for _, n := range names {
			clusters = append(clusters, clusterNames(ocm[n]))
		}
		if !check(names, clusters) {
			return false, fmt.Sprintf("OCM slices %v hold %v", names, clusters), nil
		}
		want := map[string]sigSlice{}
		for i, n := range names {
			s := sigSlice{Labels: sigLabels(p, i), SchedulerName: sigdecision.SchedulerName, Controlled: true,
				Decisions: []multiclusterv1alpha1.ClusterDecision{}}
			for _, cd := range ocm[n].Status.Decisions {
				if cd.Reason == "" {
					return false, fmt.Sprintf("OCM slice %s has a decision without a reason: %+v", n, cd), nil
				}
				s.Decisions = append(s.Decisions, multiclusterv1alpha1.ClusterDecision{
					ClusterProfileRef: multiclusterv1alpha1.ClusterProfileReference{Name: cd.ClusterName, Namespace: ns}, Reason: cd.Reason})
			}
			want[n] = s
		}
		if got, err = sigView(ctx, c, ns, p, skip...); err != nil {
			return false, "", err
		}
		for n, s := range got {
			if s.Decisions == nil {
				s.Decisions = []multiclusterv1alpha1.ClusterDecision{}
				got[n] = s
			}
		}
		diff := cmp.Diff(want, got)
		return diff == "", "SIG slices (-want +got):\n" + diff, nil
	})
	return got
}

func groupPlacement(ns, name string, perGroup intstr.IntOrString) *clusterv1beta1.Placement {
	return &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: clusterv1beta1.PlacementSpec{
		Tolerations: testenv.NoAgentTolerations(),
		DecisionStrategy: clusterv1beta1.DecisionStrategy{GroupStrategy: clusterv1beta1.GroupStrategy{
			DecisionGroups: []clusterv1beta1.DecisionGroup{{GroupName: "canary", GroupClusterSelector: clusterv1beta1.GroupClusterSelector{
				LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": "canary"}}}}},
			ClustersPerDecisionGroup: perGroup,
		}},
	}}
}

// foreign makes a SIG PlacementDecision that the hub does not control, labeled as slice index of
// placement p.
func foreign(t *testing.T, c client.Client, ns, name, p string, index int) *multiclusterv1alpha1.PlacementDecision {
	t.Helper()
	d := &multiclusterv1alpha1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: sigLabels(p, index)},
		SchedulerName: "someone-else",
		Decisions: []multiclusterv1alpha1.ClusterDecision{{
			ClusterProfileRef: multiclusterv1alpha1.ClusterProfileReference{Name: "elsewhere"}, Reason: "chosen by hand"}}}
	testenv.Create(t, c, d)
	return d
}

// unchanged fails the test if d is gone or changed since it was created.
func unchanged(t *testing.T, c client.Client, d *multiclusterv1alpha1.PlacementDecision) {
	t.Helper()
	got := &multiclusterv1alpha1.PlacementDecision{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(d), got); err != nil {
		t.Fatalf("the PlacementDecision the hub does not control: %v", err)
	}
	if got.ResourceVersion != d.ResourceVersion {
		t.Errorf("the PlacementDecision %s the hub does not control was changed: resourceVersion %s, created as %s; now %+v",
			d.Name, got.ResourceVersion, d.ResourceVersion, got)
	}
}

func TestMirror(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := admin(t, env)
	startHub(t, env, true)
	f := env.NewBoundSet(t, c, "sig-mirror")
	for i := 1; i <= 5; i++ {
		tier := "main"
		if i == 4 {
			tier = "canary"
		}
		f.Cluster(t, fmt.Sprintf("sig-mirror-%d", i), map[string]string{"tier": tier})
	}
	// Labeled as a tenth slice of the placement, but not the hub's: never changed nor deleted.
	stray := foreign(t, c, f.Namespace, "rollout-decision-9", "rollout", 8)
	p := groupPlacement(f.Namespace, "rollout", intstr.FromInt32(2))
	testenv.Create(t, c, p)
	waitMirror(t, c, f.Namespace, "rollout", slicesAre(map[string][]string{
		"rollout-decision-1": {"sig-mirror-4"},
		"rollout-decision-2": {"sig-mirror-1", "sig-mirror-2"},
		"rollout-decision-3": {"sig-mirror-3", "sig-mirror-5"},
	}), stray.Name)

	t.Run("a change of decisions is mirrored", func(t *testing.T) {
		testenv.Update(t, c, p, func() { p.Spec.DecisionStrategy.GroupStrategy.ClustersPerDecisionGroup = intstr.FromString("60%") })
		waitMirror(t, c, f.Namespace, "rollout", slicesAre(map[string][]string{
			"rollout-decision-1": {"sig-mirror-4"},
			"rollout-decision-2": {"sig-mirror-1", "sig-mirror-2", "sig-mirror-3"},
			"rollout-decision-3": {"sig-mirror-5"},
		}), stray.Name)
	})
	t.Run("a surplus slice is deleted", func(t *testing.T) {
		testenv.Update(t, c, p, func() { p.Spec.DecisionStrategy.GroupStrategy.ClustersPerDecisionGroup = intstr.FromString("100%") })
		waitMirror(t, c, f.Namespace, "rollout", slicesAre(map[string][]string{
			"rollout-decision-1": {"sig-mirror-4"},
			"rollout-decision-2": {"sig-mirror-1", "sig-mirror-2", "sig-mirror-3", "sig-mirror-5"},
		}), stray.Name)
	})
	t.Run("a slice someone changed is put back", func(t *testing.T) {
		d := &multiclusterv1alpha1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: "rollout-decision-2"}}
		testenv.Update(t, c, d, func() {
			d.Decisions = d.Decisions[:1]
			d.SchedulerName = "someone-else"
			d.Labels["team"] = "a" // not the hub's label: kept
		})
		waitMirror(t, c, f.Namespace, "rollout", unionIs("sig-mirror-1", "sig-mirror-2", "sig-mirror-3", "sig-mirror-4", "sig-mirror-5"), stray.Name)
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(d), d); err != nil {
			t.Fatal(err)
		}
		if d.Labels["team"] != "a" {
			t.Errorf("label team = %q, want the user's \"a\" kept", d.Labels["team"])
		}
	})
	unchanged(t, c, stray)
}
