package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	policyv1beta1 "github.com/flotilla/flotilla/api/policy/v1beta1"
)

func binding(name, placement string, subjects ...policyv1.Subject) policyv1.PlacementBinding {
	return policyv1.PlacementBinding{
		ObjectMeta:   metav1.ObjectMeta{Namespace: "gov", Name: name},
		PlacementRef: policyv1.PlacementSubject{APIGroup: "cluster.open-cluster-management.io", Kind: "Placement", Name: placement},
		Subjects:     subjects,
	}
}

func policySubject(name string) policyv1.Subject {
	return policyv1.Subject{APIGroup: policyv1.GroupVersion.Group, Kind: policyv1.Kind, Name: name}
}

func setSubject(name string) policyv1.Subject {
	return policyv1.Subject{APIGroup: policyv1.GroupVersion.Group, Kind: policyv1.PolicySetKind, Name: name}
}

func TestPlan(t *testing.T) {
	root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "gov", Name: "netpol"}}
	disabled := root.DeepCopy()
	disabled.Spec.Disabled = true
	set := &policyv1beta1.PolicySet{ObjectMeta: metav1.ObjectMeta{Namespace: "gov", Name: "baseline"}, Spec: policyv1beta1.PolicySetSpec{
		Policies:   []policyv1beta1.NonEmptyString{"netpol", "limits"},
		Exclusions: []policyv1beta1.PolicySetExclusion{{PolicyName: "netpol", ClusterNames: []policyv1beta1.NonEmptyString{"edge-1"}}},
	}}
	enforce := binding("enforce-gpu", "gpu", policySubject("netpol"))
	enforce.BindingOverrides.RemediationAction = "enforce"
	enforce.SubFilter = policyv1.Restricted
	rule := binding("old", "rules", policySubject("netpol"))
	rule.PlacementRef = policyv1.PlacementSubject{APIGroup: "apps.open-cluster-management.io", Kind: "PlacementRule", Name: "rules"}
	decided := map[string][]string{"all": {"gpu-1", "gpu-2", "edge-1"}, "gpu": {"gpu-1", "gpu-9"}, "rules": {"gpu-1"}}

	cases := map[string]struct {
		root           *policyv1.Policy
		bindings       []policyv1.PlacementBinding
		wantPlacements []*policyv1.Placement
		wantClusters   map[string]bool
	}{
		"a binding naming the policy places it on its placement's clusters": {
			root:           root,
			bindings:       []policyv1.PlacementBinding{binding("b", "all", policySubject("netpol")), binding("other", "all", policySubject("limits"))},
			wantPlacements: []*policyv1.Placement{{PlacementBinding: "b", Placement: "all"}},
			wantClusters:   map[string]bool{"gpu-1": false, "gpu-2": false, "edge-1": false},
		},
		"through a set, without the clusters the set excludes for the policy": {
			root:     root,
			bindings: []policyv1.PlacementBinding{binding("b", "all", setSubject("baseline"))},
			wantPlacements: []*policyv1.Placement{{PlacementBinding: "b", Placement: "all", PolicySet: "baseline",
				Exclusions: []policyv1.PolicyExclusion{{ClusterName: "edge-1"}}}},
			wantClusters: map[string]bool{"gpu-1": false, "gpu-2": false},
		},
		"a restricted binding only lends enforce to clusters others place": {
			root:     root,
			bindings: []policyv1.PlacementBinding{binding("b", "all", policySubject("netpol")), enforce},
			wantPlacements: []*policyv1.Placement{
				{PlacementBinding: "b", Placement: "all"}, {PlacementBinding: "enforce-gpu", Placement: "gpu"}},
			wantClusters: map[string]bool{"gpu-1": true, "gpu-2": false, "edge-1": false},
		},
		"a restricted binding alone places nothing and is not listed": {
			root:         root,
			bindings:     []policyv1.PlacementBinding{enforce},
			wantClusters: map[string]bool{},
		},
		"a disabled policy is placed nowhere, its placements still listed": {
			root:           disabled,
			bindings:       []policyv1.PlacementBinding{binding("b", "all", policySubject("netpol"))},
			wantPlacements: []*policyv1.Placement{{PlacementBinding: "b", Placement: "all"}},
			wantClusters:   map[string]bool{},
		},
		"a missing placement or a PlacementRule decides nothing and is listed without a name": {
			root:           root,
			bindings:       []policyv1.PlacementBinding{binding("b", "nowhere", policySubject("netpol")), rule},
			wantPlacements: []*policyv1.Placement{{PlacementBinding: "b"}, {PlacementBinding: "old"}},
			wantClusters:   map[string]bool{},
		},
		"a subject of another group or a set that does not list the policy places nothing": {
			root: root,
			bindings: []policyv1.PlacementBinding{binding("b", "all",
				policyv1.Subject{APIGroup: "example.com", Kind: policyv1.Kind, Name: "netpol"}, setSubject("missing"))},
			wantClusters: map[string]bool{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := plan(tc.root, world{bindings: tc.bindings, sets: map[string]*policyv1beta1.PolicySet{"baseline": set}, decided: decided})
			if diff := cmp.Diff(tc.wantPlacements, got.placements); diff != "" {
				t.Errorf("placements (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantClusters, got.clusters); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReplica(t *testing.T) {
	no := false
	root := &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "gov", Name: "netpol", UID: "u-1", ResourceVersion: "7", Finalizers: []string{"x"},
			Labels:      map[string]string{"team": "ml", "policy.open-cluster-management.io/category": "CM"},
			Annotations: map[string]string{"argocd.argoproj.io/tracking-id": "t", "policy.open-cluster-management.io/standards": "NIST"}},
		Spec:   policyv1.PolicySpec{RemediationAction: "inform", CopyPolicyMetadata: &no},
		Status: policyv1.PolicyStatus{ComplianceState: policyv1.Compliant},
	}
	got := replica(root, "gpu-1", true)
	want := &policyv1.Policy{
		TypeMeta: metav1.TypeMeta{APIVersion: "policy.open-cluster-management.io/v1", Kind: "Policy"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "gpu-1", Name: "gov.netpol",
			Labels: map[string]string{"policy.open-cluster-management.io/category": "CM",
				policyv1.ClusterNameLabel: "gpu-1", policyv1.ClusterNamespaceLabel: "gpu-1", policyv1.RootPolicyLabel: "gov.netpol"},
			Annotations: map[string]string{"policy.open-cluster-management.io/standards": "NIST",
				policyv1.ArgoCDCompareOptionsAnnotation: "IgnoreExtraneous", policyv1.RootPolicyUIDAnnotation: "u-1"}},
		Spec: policyv1.PolicySpec{RemediationAction: policyv1.Enforce, CopyPolicyMetadata: &no},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replica (-want +got):\n%s", diff)
	}
	root.Spec.CopyPolicyMetadata = nil
	if got := replica(root, "gpu-1", false); got.Labels["team"] != "ml" || got.Spec.RemediationAction != "inform" {
		t.Errorf("with copyPolicyMetadata unset the root's labels are copied and without an override its remediationAction kept; got labels %v, remediationAction %q",
			got.Labels, got.Spec.RemediationAction)
	}
}

func TestRootCompliance(t *testing.T) {
	st := func(states ...policyv1.ComplianceState) []*policyv1.CompliancePerClusterStatus {
		var out []*policyv1.CompliancePerClusterStatus
		for _, s := range states {
			out = append(out, &policyv1.CompliancePerClusterStatus{ComplianceState: s})
		}
		return out
	}
	cases := map[string]struct {
		in   []*policyv1.CompliancePerClusterStatus
		want policyv1.ComplianceState
	}{
		"no clusters":                 {nil, ""},
		"all compliant":               {st(policyv1.Compliant, policyv1.Compliant), policyv1.Compliant},
		"one silent":                  {st(policyv1.Compliant, ""), ""},
		"pending beats silent":        {st("", policyv1.Pending, policyv1.Compliant), policyv1.Pending},
		"non-compliant beats pending": {st(policyv1.Pending, policyv1.NonCompliant, ""), policyv1.NonCompliant},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := rootCompliance(tc.in); got != tc.want {
				t.Errorf("rootCompliance = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSetStatus(t *testing.T) {
	set := &policyv1beta1.PolicySet{ObjectMeta: metav1.ObjectMeta{Namespace: "gov", Name: "baseline"}, Spec: policyv1beta1.PolicySetSpec{
		Policies: []policyv1beta1.NonEmptyString{"netpol", "limits", "gone", "off"},
		Exclusions: []policyv1beta1.PolicySetExclusion{{PolicyName: "limits",
			ClusterNames: []policyv1beta1.NonEmptyString{"gpu-2", "edge-1"}}},
	}}
	placed := func(states map[string]policyv1.ComplianceState) *policyv1.Policy {
		p := &policyv1.Policy{Status: policyv1.PolicyStatus{Placement: []*policyv1.Placement{{PlacementBinding: "b", Placement: "all", PolicySet: "baseline"}}}}
		for _, c := range []string{"edge-1", "gpu-1", "gpu-2"} {
			if s, ok := states[c]; ok {
				p.Status.Status = append(p.Status.Status, &policyv1.CompliancePerClusterStatus{ClusterName: c, ComplianceState: s})
			}
		}
		return p
	}
	off := placed(nil)
	off.Spec.Disabled = true
	members := map[string]*policyv1.Policy{
		"netpol": placed(map[string]policyv1.ComplianceState{"gpu-1": policyv1.Compliant, "gpu-2": policyv1.Compliant}),
		// Non-compliant only where the set excludes it: the set is compliant.
		"limits": placed(map[string]policyv1.ComplianceState{"gpu-1": policyv1.Compliant, "gpu-2": policyv1.NonCompliant}),
		"off":    off,
	}
	got := setStatus(set, members, map[string][]string{"b": {"gpu-1", "gpu-2"}})
	want := policyv1beta1.PolicySetStatus{
		Placement:     []policyv1beta1.PolicySetStatusPlacement{{PlacementBinding: "b", Placement: "all"}},
		Compliant:     policyv1.Compliant,
		StatusMessage: "Disabled policies: off; Deleted policies: gone; One or more policies were excluded. For details, see status.exclusions.",
		Exclusions:    []policyv1beta1.PolicySetStatusExclusion{{PolicyName: "limits", Clusters: []policyv1beta1.NonEmptyString{"edge-1", "gpu-2"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}

	members["netpol"] = placed(map[string]policyv1.ComplianceState{"gpu-1": policyv1.Compliant})
	members["limits"] = placed(nil)
	got = setStatus(set, members, map[string][]string{"b": {"gpu-1", "gpu-2"}})
	if got.Compliant != "" || got.StatusMessage != "Disabled policies: off; No status provided while awaiting policy status: limits; Deleted policies: gone; "+
		"One or more policies were excluded. For details, see status.exclusions." {
		t.Errorf("with limits silent the set shows no compliance and says so; got %q, %q", got.Compliant, got.StatusMessage)
	}
	if got := setStatus(&policyv1beta1.PolicySet{}, nil, nil); !cmp.Equal(got, policyv1beta1.PolicySetStatus{}) {
		t.Errorf("an empty set has an empty status, got %+v", got)
	}
}

func TestSeries(t *testing.T) {
	var s series
	root := types.NamespacedName{Namespace: "gov", Name: "netpol"}
	value := func(typ, cluster string) float64 {
		return testutil.ToFloat64(complianceGauge.WithLabelValues(typ, "netpol", "gov", cluster))
	}
	s.record(root, &policyv1.PolicyStatus{ComplianceState: policyv1.NonCompliant, Status: []*policyv1.CompliancePerClusterStatus{
		{ClusterNamespace: "a", ComplianceState: policyv1.Compliant}, {ClusterNamespace: "b", ComplianceState: policyv1.NonCompliant}}})
	if got := []float64{value("root", rootSentinel), value("propagated", "a"), value("propagated", "b")}; !cmp.Equal(got, []float64{1, 0, 1}) {
		t.Errorf("series = %v, want [1 0 1]", got)
	}
	s.record(root, &policyv1.PolicyStatus{Status: []*policyv1.CompliancePerClusterStatus{{ClusterNamespace: "a"}}})
	if n := testutil.CollectAndCount(complianceGauge); n != 2 {
		t.Errorf("%d series after b left, want 2 (root and a)", n)
	}
	if got := value("root", rootSentinel); got != -1 {
		t.Errorf("a root no cluster has reported on: %v, want -1", got)
	}
	s.record(root, nil)
	if n := testutil.CollectAndCount(complianceGauge); n != 0 {
		t.Errorf("%d series after the root went, want 0", n)
	}
}

func TestComplianceScores(t *testing.T) {
	cp := func(root string, state policyv1.ComplianceState, hubs bool) policyv1.Policy {
		p := policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: root, Labels: map[string]string{policyv1.RootPolicyLabel: root}},
			Status: policyv1.PolicyStatus{ComplianceState: state}}
		if hubs {
			p.Annotations = map[string]string{policyv1.RootPolicyUIDAnnotation: "u"}
		}
		return p
	}
	got := complianceScores([]policyv1.Policy{
		cp("gov.residency", policyv1.NonCompliant, true), cp("gov.netpol", policyv1.Compliant, true),
		cp("gov.new", "", true), cp("gov.pending", policyv1.Pending, true),
		cp("gov.forged", policyv1.Compliant, false), // not the hub's copy: not the cluster's word
		{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "root-here"}},
	})
	want := []clusterv1alpha1.AddOnPlacementScoreItem{
		{Name: "gov.netpol", Value: ScoreCompliant}, {Name: "gov.new", Value: ScoreUnknown},
		{Name: "gov.pending", Value: ScoreUnknown}, {Name: "gov.residency", Value: ScoreNonCompliant},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
}

func TestTrimCopy(t *testing.T) {
	root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "gov", Name: "netpol", UID: "u"},
		Spec: policyv1.PolicySpec{RemediationAction: "inform", PolicyTemplates: []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: []byte(`{"kind":"ConfigurationPolicy"}`)}}}}}
	want := replica(root, "c1", false)
	onServer := want.DeepCopy()
	onServer.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "flotilla"}}
	onServer.Status = policyv1.PolicyStatus{ComplianceState: policyv1.Compliant, Details: []*policyv1.DetailsPerTemplate{{ComplianceState: policyv1.Compliant}}}
	got, err := TrimCopy(onServer.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	cached := got.(*policyv1.Policy)
	if cached.Spec.PolicyTemplates != nil || cached.Status.Details != nil || cached.ManagedFields != nil || cached.Status.ComplianceState != policyv1.Compliant {
		t.Errorf("the cached copy keeps %+v", cached)
	}
	if !sameCopy(cached, want) {
		t.Error("a copy as it should be is taken for a changed one")
	}
	edited := root.DeepCopy()
	edited.Spec.RemediationAction = "enforce"
	if sameCopy(cached, replica(edited, "c1", false)) {
		t.Error("a copy of the old spec is taken for the new one")
	}
	if sameCopy(cached, replica(root, "c1", true)) {
		t.Error("a copy without the binding's enforce is taken for one with it")
	}
	// Roots are kept whole.
	r, _ := TrimCopy(root.DeepCopy())
	if diff := cmp.Diff(root, r.(*policyv1.Policy)); diff != "" {
		t.Errorf("a root was trimmed (-want +got):\n%s", diff)
	}
}
