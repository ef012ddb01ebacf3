package kueue

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
)

func slice(ds ...clusterv1beta1.ClusterDecision) clusterv1beta1.PlacementDecision {
	return clusterv1beta1.PlacementDecision{Status: clusterv1beta1.PlacementDecisionStatus{Decisions: ds}}
}

func decision(name string, score int64) clusterv1beta1.ClusterDecision {
	return clusterv1beta1.ClusterDecision{ClusterName: name, Score: score}
}

func TestClusters(t *testing.T) {
	var many []clusterv1beta1.ClusterDecision
	var first20 []string
	for i := range 25 {
		many = append(many, decision(fmt.Sprintf("c%02d", i), int64(100-i)))
		if i < 20 {
			first20 = append(first20, fmt.Sprintf("c%02d", i))
		}
	}
	cases := map[string]struct {
		slices []clusterv1beta1.PlacementDecision
		want   []string
	}{
		"none":                      {want: []string{}},
		"best score first":          {slices: []clusterv1beta1.PlacementDecision{slice(decision("a", 1), decision("b", 30), decision("c", 2))}, want: []string{"b", "c", "a"}},
		"ties by name":              {slices: []clusterv1beta1.PlacementDecision{slice(decision("z", 5), decision("m", 5), decision("a", 5))}, want: []string{"a", "m", "z"}},
		"across slices":             {slices: []clusterv1beta1.PlacementDecision{slice(decision("a", 1)), slice(decision("b", 9))}, want: []string{"b", "a"}},
		"negative scores":           {slices: []clusterv1beta1.PlacementDecision{slice(decision("a", -50), decision("b", 0))}, want: []string{"b", "a"}},
		"a cluster twice, its best": {slices: []clusterv1beta1.PlacementDecision{slice(decision("a", 1), decision("b", 5)), slice(decision("a", 9))}, want: []string{"a", "b"}},
		"no cluster name skipped":   {slices: []clusterv1beta1.PlacementDecision{slice(decision("", 99), decision("a", 1))}, want: []string{"a"}},
		"at most 20, the best":      {slices: []clusterv1beta1.PlacementDecision{slice(many...)}, want: first20},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Clusters(tc.slices)); diff != "" {
				t.Errorf("Clusters (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParametersError(t *testing.T) {
	cases := map[string]struct {
		p *kueuev1beta2.AdmissionCheckParametersReference
		// want are substrings of the error; none means no error.
		want []string
	}{
		"a placement": {p: &kueuev1beta2.AdmissionCheckParametersReference{APIGroup: "cluster.open-cluster-management.io", Kind: "Placement", Name: "p"}},
		"missing":     {want: []string{"spec.parameters is missing", "kind: Placement", "namespace kueue-system"}},
		"wrong group": {p: &kueuev1beta2.AdmissionCheckParametersReference{APIGroup: "kueue.x-k8s.io", Kind: "Placement", Name: "p"},
			want: []string{`spec.parameters.apiGroup is "kueue.x-k8s.io"`, "apiGroup: cluster.open-cluster-management.io"}},
		"wrong kind": {p: &kueuev1beta2.AdmissionCheckParametersReference{APIGroup: "cluster.open-cluster-management.io", Kind: "MultiKueueConfig", Name: "p"},
			want: []string{`spec.parameters.kind is "MultiKueueConfig", not Placement`}},
		"no name": {p: &kueuev1beta2.AdmissionCheckParametersReference{APIGroup: "cluster.open-cluster-management.io", Kind: "Placement"},
			want: []string{"spec.parameters.name is empty"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ParametersError(tc.p, DefaultNamespace)
			if len(tc.want) == 0 && got != "" {
				t.Errorf("ParametersError = %q, want none", got)
			}
			if len(tc.want) > 0 && got == "" {
				t.Errorf("ParametersError = none, want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("ParametersError = %q, want it to say %q", got, w)
				}
			}
		})
	}
}

func TestActive(t *testing.T) {
	base := State{Namespace: "kueue-system", Placement: "gpu", Clusters: []string{"a", "b"}}
	with := func(change func(*State)) State { s := base; change(&s); return s }
	type result struct {
		Status  metav1.ConditionStatus
		Reason  string
		Message string
	}
	cases := map[string]struct {
		state State
		want  result
	}{
		"active": {state: base, want: result{metav1.ConditionTrue, ReasonActive, "MultiKueueConfig gpu lists 2 clusters of Placement kueue-system/gpu"}},
		"bad parameters first": {state: with(func(s *State) { s.ParametersError = "spec.parameters.kind is wrong"; s.PlacementMissing = true }),
			want: result{metav1.ConditionFalse, ReasonInvalidParameters, "spec.parameters.kind is wrong"}},
		"placement missing": {state: with(func(s *State) { s.PlacementMissing, s.Clusters = true, nil }),
			want: result{metav1.ConditionFalse, ReasonPlacementNotFound,
				"Placement kueue-system/gpu (spec.parameters.name) not found: create it in namespace kueue-system or name an existing one"}},
		"no clusters": {state: with(func(s *State) { s.Clusters = nil }),
			want: result{metav1.ConditionFalse, ReasonNoClusters,
				"Placement kueue-system/gpu has decided no clusters: check its predicates, cluster sets and bindings in namespace kueue-system"}},
		"one cluster declared lost": {state: with(func(s *State) { s.Clusters, s.Lost = []string{"b"}, []string{"a"} }),
			want: result{metav1.ConditionTrue, ReasonActive, "MultiKueueConfig gpu lists 1 clusters of Placement kueue-system/gpu; left out while declared lost: a"}},
		"every cluster declared lost": {state: with(func(s *State) { s.Clusters, s.Lost = nil, []string{"a", "b"} }),
			want: result{metav1.ConditionFalse, ReasonClustersLost,
				"every cluster Placement kueue-system/gpu decided is declared lost (a, b): MultiKueue dispatches nothing until one is back or the placement decides another (docs/failover.md)"}},
		"clash before credentials": {state: with(func(s *State) {
			s.Clashes, s.MissingSecrets = []string{"MultiKueueConfig gpu"}, []string{"multikueue-a"}
		}),
			want: result{metav1.ConditionFalse, ReasonNameClash,
				"in the way and not the hub's (no label kueue.flotilla.io/managed-by=flotilla), so left alone: MultiKueueConfig gpu; delete them, or rename the placement"}},
		"credentials pending": {state: with(func(s *State) { s.MissingSecrets = []string{"multikueue-a", "multikueue-b"} }),
			want: result{metav1.ConditionFalse, ReasonCredentialsPending,
				"waiting for kubeconfig Secrets multikueue-a, multikueue-b (key kubeconfig) in namespace kueue-system" + pending}},
		"cluster not accepted, before pending credentials": {state: with(func(s *State) {
			s.NotAccepted, s.MissingSecrets = []string{"ManagedCluster b is not accepted"}, []string{"multikueue-a"}
		}),
			want: result{metav1.ConditionFalse, ReasonClusterNotAccepted,
				"Placement kueue-system/gpu decides clusters the hub gives no MultiKueue credentials: ManagedCluster b is not accepted; " +
					"accept them (spec.hubAcceptsClient: true), or have the placement leave them out; also waiting for kubeconfig Secrets multikueue-a"}},
		"ClusterProfile path pending": {state: with(func(s *State) {
			s.Pending = []string{"ClusterProfile kueue-system/a has no access provider open-cluster-management: no client config", "a token of ManagedServiceAccount b/multikueue: not yet"}
		}),
			want: result{metav1.ConditionFalse, ReasonCredentialsPending,
				"waiting for: ClusterProfile kueue-system/a has no access provider open-cluster-management: no client config; a token of ManagedServiceAccount b/multikueue: not yet"}},
		"cluster not accepted, before the ClusterProfile path's pending": {state: with(func(s *State) {
			s.NotAccepted, s.Pending = []string{"ManagedCluster b is not accepted"}, []string{"ManagedServiceAccount a/multikueue (the hub makes it)"}
		}),
			want: result{metav1.ConditionFalse, ReasonClusterNotAccepted,
				"Placement kueue-system/gpu decides clusters the hub gives no MultiKueue credentials: ManagedCluster b is not accepted; " +
					"accept them (spec.hubAcceptsClient: true), or have the placement leave them out; also waiting for: ManagedServiceAccount a/multikueue (the hub makes it)"}},
		"secrets not readable": {state: with(func(s *State) { s.MissingSecrets, s.SecretsForbidden = []string{"multikueue-a"}, true }),
			want: result{metav1.ConditionFalse, ReasonCredentialsPending,
				"the hub may not read kubeconfig Secrets multikueue-a in namespace kueue-system: grant it get on secrets there with a Role (docs/kueue.md)"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := Active(tc.state, 7)
			if c.Type != "Active" || c.ObservedGeneration != 7 {
				t.Errorf("type %q generation %d, want Active 7", c.Type, c.ObservedGeneration)
			}
			if diff := cmp.Diff(tc.want, result{c.Status, c.Reason, c.Message}); diff != "" {
				t.Errorf("Active (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOwners(t *testing.T) {
	ac := func(name string) *kueuev1beta2.AdmissionCheck {
		return &kueuev1beta2.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)}}
	}
	a, b := ownerRef(ac("a")), ownerRef(ac("b"))
	refs, added := withOwner(nil, a)
	if diff := cmp.Diff([]metav1.OwnerReference{a}, refs); diff != "" || !added {
		t.Errorf("withOwner(nil, a) added=%t (-want +got):\n%s", added, diff)
	}
	refs, added = withOwner(refs, a)
	if len(refs) != 1 || added {
		t.Errorf("withOwner twice: %d refs, added=%t; want 1, false", len(refs), added)
	}
	refs, _ = withOwner(refs, b)
	if diff := cmp.Diff([]metav1.OwnerReference{b}, withoutOwner(refs, a.UID)); diff != "" {
		t.Errorf("withoutOwner(a) (-want +got):\n%s", diff)
	}
	if a.Controller != nil || *a.BlockOwnerDeletion {
		t.Errorf("owner reference %+v: want no controller, not blocking deletion", a)
	}
}

// pending ends the CredentialsPending message.
const pending = ": the hub writes each from the token the cluster's agent reports (built-in add-on multikueue-worker), unless you write it yourself"
