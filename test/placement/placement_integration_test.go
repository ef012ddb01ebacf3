//go:build integration

package placement

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func labelPlacement(ns, name string, n int32, match map[string]string) *clusterv1beta1.Placement {
	return &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: clusterv1beta1.PlacementSpec{
		NumberOfClusters: ptr.To(n),
		Tolerations:      testenv.NoAgentTolerations(),
		Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchLabels: match}}}},
	}}
}

// waitDecisions waits until placement ns/name's PlacementDecisions are want.
func waitDecisions(t *testing.T, c client.Client, ns, name string, want decisionView) []clusterv1beta1.PlacementDecision {
	t.Helper()
	var items []clusterv1beta1.PlacementDecision
	testenv.WaitFor(t, wait, fmt.Sprintf("the PlacementDecisions of %s/%s", ns, name), func(ctx context.Context) (bool, string, error) {
		got, all, err := decisions(ctx, c, ns, name)
		items = all
		diff := cmp.Diff(want, got)
		return diff == "", fmt.Sprintf("%s\n(-want +got)\n%s", placementStatus(ctx, c, ns, name), diff), err
	})
	return items
}

// waitStatus waits until placement ns/name has selected n clusters and its conditions, for its
// generation, are as given (type -> Status/Reason).
func waitStatus(t *testing.T, c client.Client, ns, name string, n int32, conds map[string]string) *clusterv1beta1.Placement {
	t.Helper()
	var p *clusterv1beta1.Placement
	testenv.WaitFor(t, wait, fmt.Sprintf("the status of %s/%s", ns, name), func(ctx context.Context) (bool, string, error) {
		var err error
		if p, err = getPlacement(ctx, c, ns, name); err != nil {
			return false, "", err
		}
		got := map[string]string{}
		for typ := range conds {
			got[typ] = condition(p, typ)
		}
		diff := cmp.Diff(conds, got)
		return diff == "" && p.Status.NumberOfSelectedClusters == n,
			fmt.Sprintf("numberOfSelectedClusters %d (want %d); conditions (-want +got)\n%s", p.Status.NumberOfSelectedClusters, n, diff), nil
	})
	return p
}

// placementStatus shows a placement's status, for failure messages.
func placementStatus(ctx context.Context, c client.Client, ns, name string) string {
	p, err := getPlacement(ctx, c, ns, name)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "placement generation %d, %d selected", p.Generation, p.Status.NumberOfSelectedClusters)
	for _, c := range p.Status.Conditions {
		fmt.Fprintf(&b, "; %s=%s/%s (generation %d): %s", c.Type, c.Status, c.Reason, c.ObservedGeneration, c.Message)
	}
	return b.String()
}

var satisfied = map[string]string{
	clusterv1beta1.PlacementConditionSatisfied:     "True/" + clusterv1beta1.PlacementReasonAllDecisionsScheduled,
	clusterv1beta1.PlacementConditionMisconfigured: "False/" + clusterv1beta1.PlacementReasonSucceedConfigured,
}

func TestPlacementByLabel(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := admin(t, env)
	startHub(t, env)
	f := env.NewBoundSet(t, c, "pl-label")
	f.Cluster(t, "pl-label-1", map[string]string{"env": "prod"})
	f.Cluster(t, "pl-label-2", map[string]string{"env": "prod"})
	f.Cluster(t, "pl-label-3", map[string]string{"env": "prod"})
	f.Cluster(t, "pl-label-4", map[string]string{"env": "dev"})
	p := labelPlacement(f.Namespace, "prod", 2, map[string]string{"env": "prod"})
	testenv.Create(t, c, p)

	// Balance and Steady tie every cluster at first: ties go by name.
	items := waitDecisions(t, c, f.Namespace, "prod", decisionView{"prod-decision-1": {Labels: labels("prod", "", 0), Clusters: []string{"pl-label-1", "pl-label-2"}}})
	got := waitStatus(t, c, f.Namespace, "prod", 2, satisfied)
	ref := metav1.GetControllerOf(&items[0])
	if ref == nil || ref.Kind != "Placement" || ref.Name != "prod" || ref.UID != got.UID {
		t.Errorf("prod-decision-1's controller is %+v, want the Placement prod (uid %s)", ref, got.UID)
	}
	for _, d := range items[0].Status.Decisions {
		if !strings.HasPrefix(d.Reason, "score ") {
			t.Errorf("decision %s has reason %q, want a score explained", d.ClusterName, d.Reason)
		}
	}
	wantGroups := []clusterv1beta1.DecisionGroupStatus{{DecisionGroupIndex: 0, Decisions: []string{"prod-decision-1"}, ClusterCount: 2}}
	if diff := cmp.Diff(wantGroups, got.Status.DecisionGroups); diff != "" {
		t.Errorf("status.decisionGroups (-want +got):\n%s", diff)
	}

	t.Run("a label change on one cluster updates the decisions", func(t *testing.T) {
		setLabel(t, c, "pl-label-1", "env", "dev")
		waitDecisions(t, c, f.Namespace, "prod", decisionView{"prod-decision-1": {Labels: labels("prod", "", 0), Clusters: []string{"pl-label-2", "pl-label-3"}}})
		waitStatus(t, c, f.Namespace, "prod", 2, satisfied)
	})

	t.Run("too few clusters: NotAllDecisionsScheduled", func(t *testing.T) {
		setLabel(t, c, "pl-label-2", "env", "dev")
		waitDecisions(t, c, f.Namespace, "prod", decisionView{"prod-decision-1": {Labels: labels("prod", "", 0), Clusters: []string{"pl-label-3"}}})
		waitStatus(t, c, f.Namespace, "prod", 1, map[string]string{
			clusterv1beta1.PlacementConditionSatisfied: "False/" + clusterv1beta1.PlacementReasonNotAllDecisionsScheduled})
	})

	t.Run("few events: one per later change of the selected clusters", func(t *testing.T) {
		var n int
		testenv.WaitFor(t, wait, "the DecisionsUpdated events", func(ctx context.Context) (bool, string, error) {
			evs, err := env.Hub.Client.EventsV1().Events(f.Namespace).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, "", err
			}
			n = 0
			for _, e := range evs.Items {
				if e.Reason == "DecisionsUpdated" && e.Regarding.Name == "prod" {
					n++
					if e.Series != nil { // a repeated event is counted on one object
						n += int(e.Series.Count) - 1
					}
				}
			}
			return n >= 2, fmt.Sprintf("%d events", n), nil
		})
		if n != 2 {
			t.Errorf("%d DecisionsUpdated events for the first decisions and 2 changes of the selected clusters, want 2 (none for the first)", n)
		}
	})

	// As OCM: numberOfClusters 0 decides none although pl-label-3 still qualifies, empties the
	// PlacementDecision, and reports NoManagedClusterMatched.
	t.Run("numberOfClusters 0: decisions emptied, NoManagedClusterMatched", func(t *testing.T) {
		pl := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: "prod"}}
		testenv.Update(t, c, pl, func() { pl.Spec.NumberOfClusters = ptr.To[int32](0) })
		waitDecisions(t, c, f.Namespace, "prod", decisionView{"prod-decision-1": {Labels: labels("prod", "", 0), Clusters: []string{}}})
		got := waitStatus(t, c, f.Namespace, "prod", 0, map[string]string{
			clusterv1beta1.PlacementConditionSatisfied: "False/" + clusterv1beta1.PlacementReasonNoManagedClusterMatched})
		if msg := meta.FindStatusCondition(got.Status.Conditions, clusterv1beta1.PlacementConditionSatisfied).Message; !strings.HasPrefix(msg, scheduler.NoClusterChosenMessage) {
			t.Errorf("PlacementSatisfied message %q, want it to begin with OCM's %q", msg, scheduler.NoClusterChosenMessage)
		}
	})
}

func TestDecisionGroups(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := admin(t, env)
	startHub(t, env)
	f := env.NewBoundSet(t, c, "pl-groups")
	for i := 1; i <= 5; i++ {
		tier := "main"
		if i == 4 {
			tier = "canary"
		}
		f.Cluster(t, fmt.Sprintf("pl-groups-%d", i), map[string]string{"tier": tier})
	}
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: "rollout"}, Spec: clusterv1beta1.PlacementSpec{
		Tolerations: testenv.NoAgentTolerations(),
		DecisionStrategy: clusterv1beta1.DecisionStrategy{GroupStrategy: clusterv1beta1.GroupStrategy{
			DecisionGroups: []clusterv1beta1.DecisionGroup{{GroupName: "canary", GroupClusterSelector: clusterv1beta1.GroupClusterSelector{
				LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": "canary"}}}}},
			ClustersPerDecisionGroup: intstr.FromInt32(2),
		}},
	}}
	testenv.Create(t, c, p)
	waitDecisions(t, c, f.Namespace, "rollout", decisionView{
		"rollout-decision-1": {Labels: labels("rollout", "canary", 0), Clusters: []string{"pl-groups-4"}},
		"rollout-decision-2": {Labels: labels("rollout", "", 1), Clusters: []string{"pl-groups-1", "pl-groups-2"}},
		"rollout-decision-3": {Labels: labels("rollout", "", 2), Clusters: []string{"pl-groups-3", "pl-groups-5"}},
	})
	got := waitStatus(t, c, f.Namespace, "rollout", 5, satisfied)
	want := []clusterv1beta1.DecisionGroupStatus{
		{DecisionGroupIndex: 0, DecisionGroupName: "canary", Decisions: []string{"rollout-decision-1"}, ClusterCount: 1},
		{DecisionGroupIndex: 1, Decisions: []string{"rollout-decision-2"}, ClusterCount: 2},
		{DecisionGroupIndex: 2, Decisions: []string{"rollout-decision-3"}, ClusterCount: 2},
	}
	if diff := cmp.Diff(want, got.Status.DecisionGroups); diff != "" {
		t.Errorf("status.decisionGroups (-want +got):\n%s", diff)
	}

	t.Run("clustersPerDecisionGroup as a percent", func(t *testing.T) {
		testenv.Update(t, c, p, func() { p.Spec.DecisionStrategy.GroupStrategy.ClustersPerDecisionGroup = intstr.FromString("60%") })
		// 60% of 5 is 3: the canary group, then the other four in groups of three.
		waitDecisions(t, c, f.Namespace, "rollout", decisionView{
			"rollout-decision-1": {Labels: labels("rollout", "canary", 0), Clusters: []string{"pl-groups-4"}},
			"rollout-decision-2": {Labels: labels("rollout", "", 1), Clusters: []string{"pl-groups-1", "pl-groups-2", "pl-groups-3"}},
			"rollout-decision-3": {Labels: labels("rollout", "", 2), Clusters: []string{"pl-groups-5"}},
		})
	})
}

func TestBadInput(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := admin(t, env)
	startHub(t, env)
	f := env.NewBoundSet(t, c, "pl-bad")
	f.Cluster(t, "pl-bad-1", map[string]string{"env": "prod"})
	f.Cluster(t, "pl-bad-2", map[string]string{"env": "prod"})
	p := labelPlacement(f.Namespace, "bad", 1, map[string]string{"env": "prod"})
	testenv.Create(t, c, p)
	decided := decisionView{"bad-decision-1": {Labels: labels("bad", "", 0), Clusters: []string{"pl-bad-1"}}}
	waitDecisions(t, c, f.Namespace, "bad", decided)

	t.Run("an unknown built-in prioritizer: misconfigured, decisions kept", func(t *testing.T) {
		testenv.Update(t, c, p, func() {
			p.Spec.NumberOfClusters = ptr.To(int32(2))
			p.Spec.PrioritizerPolicy.Configurations = []clusterv1beta1.PrioritizerConfig{{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{
				Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: "Nope"}}}
		})
		got := waitStatus(t, c, f.Namespace, "bad", 1, map[string]string{
			clusterv1beta1.PlacementConditionMisconfigured: "True/" + clusterv1beta1.PlacementReasonMisconfigured})
		msg := meta.FindStatusCondition(got.Status.Conditions, clusterv1beta1.PlacementConditionMisconfigured).Message
		for _, want := range []string{"spec.prioritizerPolicy.configurations[0].scoreCoordinate.builtIn", `"Nope"`} {
			if !strings.Contains(msg, want) {
				t.Errorf("PlacementMisconfigured message %q does not name %s", msg, want)
			}
		}
		// numberOfClusters went to 2, but nothing is rescheduled: the one decision stays.
		time.Sleep(2 * time.Second)
		if now, _, err := decisions(context.Background(), c, f.Namespace, "bad"); err != nil || !cmp.Equal(decided, now) {
			t.Errorf("decisions of a misconfigured placement changed (err %v), (-want +got):\n%s", err, cmp.Diff(decided, now))
		}
	})

	t.Run("a namespace without bindings; another placement is still served", func(t *testing.T) {
		lonely := env.Namespace(t, env.Hub)
		testenv.Create(t, c, labelPlacement(lonely, "unbound", 1, nil))
		waitStatus(t, c, lonely, "unbound", 0, map[string]string{
			clusterv1beta1.PlacementConditionSatisfied: "False/" + clusterv1beta1.PlacementReasonNoManagedClusterSetBindings})
		waitDecisions(t, c, lonely, "unbound", decisionView{"unbound-decision-1": {Labels: labels("unbound", "", 0), Clusters: []string{}}})

		testenv.Create(t, c, labelPlacement(f.Namespace, "good", 2, map[string]string{"env": "prod"}))
		waitDecisions(t, c, f.Namespace, "good", decisionView{"good-decision-1": {Labels: labels("good", "", 0), Clusters: []string{"pl-bad-1", "pl-bad-2"}}})
		waitStatus(t, c, f.Namespace, "good", 2, satisfied)
	})

	t.Run("fixed, it is scheduled again", func(t *testing.T) {
		testenv.Update(t, c, p, func() { p.Spec.PrioritizerPolicy.Configurations = nil })
		waitDecisions(t, c, f.Namespace, "bad", decisionView{"bad-decision-1": {Labels: labels("bad", "", 0), Clusters: []string{"pl-bad-1", "pl-bad-2"}}})
		waitStatus(t, c, f.Namespace, "bad", 2, satisfied)
	})
}

func TestDisableAnnotation(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := admin(t, env)
	startHub(t, env)
	f := env.NewBoundSet(t, c, "pl-off")
	f.Cluster(t, "pl-off-1", map[string]string{"env": "prod"})
	f.Cluster(t, "pl-off-2", map[string]string{"env": "dev"})
	p := labelPlacement(f.Namespace, "off", 2, map[string]string{"env": "prod"})
	testenv.Create(t, c, p)
	before := decisionView{"off-decision-1": {Labels: labels("off", "", 0), Clusters: []string{"pl-off-1"}}}
	waitDecisions(t, c, f.Namespace, "off", before)

	testenv.Update(t, c, p, func() { p.Annotations = map[string]string{clusterv1beta1.PlacementDisableAnnotation: "true"} })
	time.Sleep(time.Second) // let the hub see the annotation before the change it must ignore
	setLabel(t, c, "pl-off-2", "env", "prod")
	time.Sleep(3 * time.Second)
	if got, _, err := decisions(context.Background(), c, f.Namespace, "off"); err != nil || !cmp.Equal(before, got) {
		t.Errorf("decisions of a disabled placement changed (err %v), (-want +got):\n%s", err, cmp.Diff(before, got))
	}

	testenv.Update(t, c, p, func() { delete(p.Annotations, clusterv1beta1.PlacementDisableAnnotation) })
	waitDecisions(t, c, f.Namespace, "off", decisionView{"off-decision-1": {Labels: labels("off", "", 0), Clusters: []string{"pl-off-1", "pl-off-2"}}})
}
