package explain

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/core/placementview"
)

var now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// contextNamespace is the namespace the fake hub's kubeconfig context names.
const contextNamespace = "ml"

func cluster(name string, labels map[string]string) *clusterv1.ManagedCluster {
	return &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func decision(ns, placement, name string, clusters ...string) *clusterv1beta1.PlacementDecision {
	d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels: map[string]string{clusterv1beta1.PlacementLabel: placement}}}
	for _, c := range clusters {
		d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
	}
	return d
}

// hub holds: set prod (exclusive label) with east, west and lab, bound in ml; set lab (by label)
// bound only in namespace other, so its member edge is no candidate of ml/gpu; a score for west;
// gpu's current decision (edge, which left its bound sets) and another placement's (west, twice over in two namespaces).
func hub() []client.Object {
	prod := map[string]string{clusterv1beta2.ClusterSetLabel: "prod"}
	with := func(m map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for a, b := range m {
			out[a] = b
		}
		return out
	}
	n := int32(1)
	return []client.Object{
		&clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "gpu", Generation: 2},
			Spec: clusterv1beta1.PlacementSpec{NumberOfClusters: &n, Predicates: []clusterv1beta1.ClusterPredicate{{
				RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"gpu": "h100"}}}}}}},
		cluster("east", with(prod, "gpu", "h100")),
		cluster("west", with(prod, "gpu", "h100")),
		cluster("cpu", prod),
		cluster("edge", map[string]string{"tier": "lab", "gpu": "h100"}),
		&clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "prod"}},
		&clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "lab"}, Spec: clusterv1beta2.ManagedClusterSetSpec{
			ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "lab"}}}}},
		&clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "prod"},
			Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "prod"}},
		&clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "lab"},
			Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "lab"}},
		&clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Namespace: "west", Name: "gpu"},
			Status: clusterv1alpha1.AddOnPlacementScoreStatus{Scores: []clusterv1alpha1.AddOnPlacementScoreItem{{Name: "free", Value: 50}}}},
		decision("ml", "gpu", "gpu-decision-1", "edge"),
		decision("ml", "serve", "serve-decision-1", "east"),
		decision("other", "serve", "serve-decision-1", "east", "west"),
	}
}

func runExplain(objs []client.Object, args ...string) (string, error) {
	return runExplainOf("placement", objs, args...)
}

// runExplainOf runs `flotilla explain SUB ARGS` against a fake hub holding objs.
func runExplainOf(sub string, objs []client.Object, args ...string) (string, error) {
	newClient := func(kube kubeflags.Flags) (client.Reader, *kubeflags.Loaded, error) {
		c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).Build()
		return c, &kubeflags.Loaded{Namespace: contextNamespace, Source: "hub.kubeconfig"}, nil
	}
	io, out, _ := streams.Buffers()
	root := &cobra.Command{Use: "flotilla", SilenceUsage: true, SilenceErrors: true}
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.AddCommand(newCommand(io, clocktesting.NewFakePassiveClock(now), newClient))
	root.SetArgs(append([]string{"explain", sub}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func TestExplainTable(t *testing.T) {
	// east is used by serve in two namespaces (two placements), west by one: Balance prefers
	// west. edge, gpu's current decision, is in no set bound in ml, so it is no candidate, and
	// the hub's decisions are stale.
	wantGPU := lines(
		"Placement ml/gpu: 1 of 3 clusters selected",
		"CONDITION                STATUS   REASON                  MESSAGE",
		"PlacementSatisfied       True     AllDecisionsScheduled   All cluster decisions scheduled",
		"PlacementMisconfigured   False    Succeedconfigured       Placement configurations check pass",
		"",
		"RANK   CLUSTER   RESULT       GROUP   TOTAL   SCORES (WEIGHT*SCORE)        WHY",
		"1      west      selected     0       0       Steady 1*0, Balance 1*0      -",
		"2      east      not chosen   -       -100    Steady 1*0, Balance 1*-100   not chosen: rank 2, spec.numberOfClusters is 1",
		"-      cpu       filtered     -       -       -                            Predicate: predicates[0]: label gpu=h100 not met (no gpu)",
		"",
		"The hub's PlacementDecisions select edge; scheduling now selects west: the placement controller has not caught up yet.",
	)
	// With the hub's decisions up to date, there is no note.
	upToDate := hub()
	for i, o := range upToDate {
		if o.GetName() == "gpu-decision-1" {
			upToDate[i] = decision("ml", "gpu", "gpu-decision-1", "west")
		}
	}
	wantUpToDate := lines(
		"Placement ml/gpu: 1 of 3 clusters selected",
		"CONDITION                STATUS   REASON                  MESSAGE",
		"PlacementSatisfied       True     AllDecisionsScheduled   All cluster decisions scheduled",
		"PlacementMisconfigured   False    Succeedconfigured       Placement configurations check pass",
		"",
		"RANK   CLUSTER   RESULT       GROUP   TOTAL   SCORES (WEIGHT*SCORE)        WHY",
		"1      west      selected     0       100     Steady 1*100, Balance 1*0    -",
		"2      east      not chosen   -       -100    Steady 1*0, Balance 1*-100   not chosen: rank 2, spec.numberOfClusters is 1",
		"-      cpu       filtered     -       -       -                            Predicate: predicates[0]: label gpu=h100 not met (no gpu)",
	)
	// With scheduling disabled, the note says the hub keeps its decisions.
	disabled := hub()
	disabled[0].SetAnnotations(map[string]string{clusterv1beta1.PlacementDisableAnnotation: "true"})
	wantDisabled := wantGPU[:strings.Index(wantGPU, "The hub's")] +
		"Scheduling is disabled by the annotation cluster.open-cluster-management.io/experimental-scheduling-disable=true: the hub keeps the PlacementDecisions it has (edge).\n"
	cases := map[string]struct {
		objs    []client.Object
		args    []string
		wantOut string
	}{
		"namespace/name":                  {objs: hub(), args: []string{"ml/gpu"}, wantOut: wantGPU},
		"name in the context's namespace": {objs: hub(), args: []string{"gpu"}, wantOut: wantGPU},
		"decisions up to date":            {objs: upToDate, args: []string{"ml/gpu"}, wantOut: wantUpToDate},
		"scheduling disabled":             {objs: disabled, args: []string{"ml/gpu"}, wantOut: wantDisabled},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := runExplain(tc.objs, tc.args...)
			if err != nil {
				t.Fatalf("explain: %v", err)
			}
			if diff := cmp.Diff(tc.wantOut, got); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExplainJSON(t *testing.T) {
	got, err := runExplain(hub(), "ml/gpu", "-o", "json")
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	var out placementview.Output
	dec := json.NewDecoder(strings.NewReader(got))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("decoding %s: %v", got, err)
	}
	want := []placementview.DecisionOutput{{ClusterName: "west", Score: 0, Reason: "score 0 = Steady 0 + Balance 0"}}
	if diff := cmp.Diff(want, out.Decisions); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(placementview.PlacementRef{Namespace: "ml", Name: "gpu"}, out.Placement); diff != "" {
		t.Errorf("placement (-want +got):\n%s", diff)
	}
}

func TestExplainErrors(t *testing.T) {
	cases := map[string]struct {
		args    []string
		wantErr string
	}{
		"not on the hub":   {args: []string{"ml/nope"}, wantErr: "placement ml/nope is not on the hub of kubeconfig hub.kubeconfig: list them with `flotilla get placements -n ml`"},
		"empty namespace":  {args: []string{"/gpu"}, wantErr: `placement "/gpu": give it as NAMESPACE/NAME`},
		"too many slashes": {args: []string{"ml/gpu/x"}, wantErr: `placement "ml/gpu/x": give it as NAMESPACE/NAME`},
		"bad output":       {args: []string{"ml/gpu", "-o", "yaml"}, wantErr: `--output (-o) "yaml" is not supported`},
		"no argument":      {args: nil, wantErr: "accepts 1 arg(s), received 0"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := runExplain(hub(), tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one holding %q", err, tc.wantErr)
			}
		})
	}
}
