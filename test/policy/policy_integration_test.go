//go:build integration

package policy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	policyv1beta1 "github.com/flotilla/flotilla/api/policy/v1beta1"
	"github.com/flotilla/flotilla/internal/apitest"
	"github.com/flotilla/flotilla/internal/core/rollout"
	"github.com/flotilla/flotilla/internal/hub/policy"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const wait = 60 * time.Second

// loadPolicy reads a policy-collection policy from test/policy/testdata into ns.
func loadPolicy(t *testing.T, file, ns string) *policyv1.Policy {
	t.Helper()
	return apitest.ReadPolicy(t, "testdata/"+file, ns)
}

func bind(t *testing.T, s *testenv.BoundSet, name, placement string, subjects ...policyv1.Subject) *policyv1.PlacementBinding {
	t.Helper()
	b := &policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: name},
		PlacementRef: policyv1.PlacementSubject{APIGroup: "cluster.open-cluster-management.io", Kind: "Placement", Name: placement},
		Subjects:     subjects}
	testenv.Create(t, s.Client, b)
	return b
}

func subject(kind, name string) policyv1.Subject {
	return policyv1.Subject{APIGroup: policyv1.GroupVersion.Group, Kind: kind, Name: name}
}

// copies returns the namespaces holding a copy of root (by its label), sorted, and the copies.
func copies(ctx context.Context, c client.Client, root *policyv1.Policy) ([]string, map[string]*policyv1.Policy, error) {
	l := &policyv1.PolicyList{}
	if err := c.List(ctx, l, client.MatchingLabels{policyv1.RootPolicyLabel: root.Namespace + "." + root.Name}); err != nil {
		return nil, nil, err
	}
	got, by := []string{}, map[string]*policyv1.Policy{}
	for i := range l.Items {
		got = append(got, l.Items[i].Namespace)
		by[l.Items[i].Namespace] = &l.Items[i]
	}
	slices.Sort(got)
	return got, by, nil
}

// waitCopies waits until root's copies are in exactly the namespaces want and check (if any)
// passes on them.
func waitCopies(t *testing.T, c client.Client, root *policyv1.Policy, check func(map[string]*policyv1.Policy) string, want ...string) map[string]*policyv1.Policy {
	t.Helper()
	var by map[string]*policyv1.Policy
	testenv.WaitFor(t, wait, fmt.Sprintf("copies of %s/%s in %v", root.Namespace, root.Name, want), func(ctx context.Context) (bool, string, error) {
		got, m, err := copies(ctx, c, root)
		by = m
		if err != nil || !slices.Equal(got, want) {
			return false, fmt.Sprintf("in %v", got), err
		}
		if check != nil {
			if why := check(m); why != "" {
				return false, why, nil
			}
		}
		return true, "", nil
	})
	return by
}

// report plays cluster's framework: it writes the compliance of the cluster's copy of root.
func report(t *testing.T, c client.Client, root *policyv1.Policy, cluster string, state policyv1.ComplianceState) {
	t.Helper()
	p := &policyv1.Policy{}
	key := client.ObjectKey{Namespace: cluster, Name: root.Namespace + "." + root.Name}
	if err := c.Get(context.Background(), key, p); err != nil {
		t.Fatal(err)
	}
	p.Status.ComplianceState = state
	p.Status.Details = []*policyv1.DetailsPerTemplate{{ComplianceState: state, History: []policyv1.ComplianceHistory{
		{LastTimestamp: metav1.Now(), Message: string(state) + "; the test says so", EventName: key.Name + ".1"}}}}
	if err := c.Status().Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

// waitRoot waits until root's status equals want (ignoring nothing).
func waitRoot(t *testing.T, c client.Client, root *policyv1.Policy, want policyv1.PolicyStatus) {
	t.Helper()
	testenv.WaitFor(t, wait, fmt.Sprintf("the status of %s/%s", root.Namespace, root.Name), func(ctx context.Context) (bool, string, error) {
		got := &policyv1.Policy{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(root), got); err != nil {
			return false, "", err
		}
		diff := cmp.Diff(want, got.Status)
		return diff == "", "(-want +got)\n" + diff, nil
	})
}

func perCluster(states map[string]policyv1.ComplianceState, clusters ...string) []*policyv1.CompliancePerClusterStatus {
	var out []*policyv1.CompliancePerClusterStatus
	for _, c := range clusters {
		out = append(out, &policyv1.CompliancePerClusterStatus{ClusterName: c, ClusterNamespace: c, ComplianceState: states[c]})
	}
	return out
}

func TestPropagation(t *testing.T) {
	s := testenv.StartHubWithSet(t, "plc-prop")
	c := s.Client
	for _, n := range []string{"plc-prop-1", "plc-prop-2", "plc-prop-3"} {
		env := "prod"
		if n == "plc-prop-3" {
			env = "dev"
		}
		s.AgentlessCluster(t, n, map[string]string{"environment": env})
	}
	s.AgentlessPlacement(t, "prod", map[string]string{"environment": "prod"})
	root := loadPolicy(t, "policy-namespace.yaml", s.Namespace)
	testenv.Create(t, c, root)
	bind(t, s, "binding-policy-namespace", "prod", subject(policyv1.Kind, root.Name))

	// Each prod cluster gets the copy OCM's propagator writes.
	rootName := s.Namespace + ".policy-namespace"
	by := waitCopies(t, c, root, nil, "plc-prop-1", "plc-prop-2")
	got := by["plc-prop-1"]
	if got.Name != rootName {
		t.Errorf("the copy is named %s, want %s", got.Name, rootName)
	}
	wantLabels := map[string]string{policyv1.RootPolicyLabel: rootName, policyv1.ClusterNameLabel: "plc-prop-1", policyv1.ClusterNamespaceLabel: "plc-prop-1"}
	if diff := cmp.Diff(wantLabels, got.Labels); diff != "" {
		t.Errorf("the copy's labels (-want +got):\n%s", diff)
	}
	for k, v := range map[string]string{"policy.open-cluster-management.io/standards": "NIST SP 800-53",
		policyv1.ArgoCDCompareOptionsAnnotation: "IgnoreExtraneous", policyv1.RootPolicyUIDAnnotation: string(root.UID)} {
		if got.Annotations[k] != v {
			t.Errorf("the copy's annotation %s = %q, want %q", k, got.Annotations[k], v)
		}
	}
	if diff := cmp.Diff(root.Spec, got.Spec); diff != "" {
		t.Errorf("the copy's spec differs from the root's (-root +copy):\n%s", diff)
	}
	placement := []*policyv1.Placement{{PlacementBinding: "binding-policy-namespace", Placement: "prod"}}
	waitRoot(t, c, root, policyv1.PolicyStatus{Placement: placement, Status: perCluster(nil, "plc-prop-1", "plc-prop-2")})

	// The clusters report: the root sums them as OCM does.
	report(t, c, root, "plc-prop-1", policyv1.Compliant)
	states := map[string]policyv1.ComplianceState{"plc-prop-1": policyv1.Compliant}
	waitRoot(t, c, root, policyv1.PolicyStatus{Placement: placement, Status: perCluster(states, "plc-prop-1", "plc-prop-2")})
	report(t, c, root, "plc-prop-2", policyv1.NonCompliant)
	states["plc-prop-2"] = policyv1.NonCompliant
	waitRoot(t, c, root, policyv1.PolicyStatus{Placement: placement, Status: perCluster(states, "plc-prop-1", "plc-prop-2"), ComplianceState: policyv1.NonCompliant})
	report(t, c, root, "plc-prop-2", policyv1.Compliant)
	states["plc-prop-2"] = policyv1.Compliant
	waitRoot(t, c, root, policyv1.PolicyStatus{Placement: placement, Status: perCluster(states, "plc-prop-1", "plc-prop-2"), ComplianceState: policyv1.Compliant})

	// An edit reaches every copy; the clusters' reports stay until they report again.
	testenv.Update(t, c, root, func() { root.Spec.RemediationAction = "enforce" })
	waitCopies(t, c, root, func(m map[string]*policyv1.Policy) string {
		for n, p := range m {
			if p.Spec.RemediationAction != "enforce" {
				return n + "'s copy is not enforce yet"
			}
		}
		return ""
	}, "plc-prop-1", "plc-prop-2")

	// A cluster that leaves the placement loses its copy and its place in the status; one that
	// joins gets it.
	setEnv := func(cluster, env string) {
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}
		testenv.Update(t, c, mc, func() { mc.Labels["environment"] = env })
	}
	setEnv("plc-prop-1", "dev")
	setEnv("plc-prop-3", "prod")
	waitCopies(t, c, root, nil, "plc-prop-2", "plc-prop-3")
	waitRoot(t, c, root, policyv1.PolicyStatus{Placement: placement, Status: perCluster(states, "plc-prop-2", "plc-prop-3")})

	// Disabled: no copies; the binding is still listed.
	testenv.Update(t, c, root, func() { root.Spec.Disabled = true })
	waitCopies(t, c, root, nil)
	waitRoot(t, c, root, policyv1.PolicyStatus{Placement: placement})
	testenv.Update(t, c, root, func() { root.Spec.Disabled = false })
	waitCopies(t, c, root, nil, "plc-prop-2", "plc-prop-3")

	// The root goes: so do its copies.
	if err := c.Delete(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	waitCopies(t, c, root, nil)
}

func TestPolicySetAndOverrides(t *testing.T) {
	s := testenv.StartHubWithSet(t, "plc-set")
	c := s.Client
	for _, n := range []string{"plc-set-1", "plc-set-2"} {
		s.AgentlessCluster(t, n, map[string]string{"tier": "gpu"})
	}
	s.AgentlessPlacement(t, "gpu", map[string]string{"tier": "gpu"})
	s.AgentlessPlacement(t, "first", map[string]string{"kubernetes.io/metadata.name": "none"})
	ns := loadPolicy(t, "policy-namespace.yaml", s.Namespace)
	limits := loadPolicy(t, "policy-limitmemory.yaml", s.Namespace)
	testenv.Create(t, c, ns)
	testenv.Create(t, c, limits)
	set := &policyv1beta1.PolicySet{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: "baseline"}, Spec: policyv1beta1.PolicySetSpec{
		Policies: []policyv1beta1.NonEmptyString{"policy-namespace", "policy-limitmemory"},
		Exclusions: []policyv1beta1.PolicySetExclusion{{PolicyName: "policy-limitmemory", Reason: "edge",
			ClusterNames: []policyv1beta1.NonEmptyString{"plc-set-2"}}},
	}}
	testenv.Create(t, c, set)
	bind(t, s, "baseline", "gpu", subject(policyv1.PolicySetKind, "baseline"))
	waitCopies(t, c, ns, nil, "plc-set-1", "plc-set-2")
	waitCopies(t, c, limits, nil, "plc-set-1")

	// A restricted binding with enforce turns the copies on its clusters to enforce.
	over := &policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: "enforce"},
		PlacementRef:     policyv1.PlacementSubject{APIGroup: "cluster.open-cluster-management.io", Kind: "Placement", Name: "gpu"},
		Subjects:         []policyv1.Subject{subject(policyv1.Kind, "policy-namespace")},
		BindingOverrides: policyv1.BindingOverrides{RemediationAction: "enforce"}, SubFilter: policyv1.Restricted}
	testenv.Create(t, c, over)
	waitCopies(t, c, ns, func(m map[string]*policyv1.Policy) string {
		for n, p := range m {
			if p.Spec.RemediationAction != policyv1.Enforce {
				return n + "'s copy is " + string(p.Spec.RemediationAction)
			}
		}
		return ""
	}, "plc-set-1", "plc-set-2")

	for _, n := range []string{"plc-set-1", "plc-set-2"} {
		report(t, c, ns, n, policyv1.Compliant)
	}
	report(t, c, limits, "plc-set-1", policyv1.NonCompliant)
	testenv.WaitFor(t, wait, "the set's status", func(ctx context.Context) (bool, string, error) {
		got := &policyv1beta1.PolicySet{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(set), got); err != nil {
			return false, "", err
		}
		want := policyv1beta1.PolicySetStatus{
			Placement:     []policyv1beta1.PolicySetStatusPlacement{{PlacementBinding: "baseline", Placement: "gpu"}},
			Compliant:     policyv1.NonCompliant,
			StatusMessage: "All policies are reporting status; One or more policies were excluded. For details, see status.exclusions.",
			Exclusions:    []policyv1beta1.PolicySetStatusExclusion{{PolicyName: "policy-limitmemory", Clusters: []policyv1beta1.NonEmptyString{"plc-set-2"}}},
		}
		diff := cmp.Diff(want, got.Status)
		return diff == "", diff, nil
	})

	// The set's binding goes: every copy goes.
	if err := c.Delete(context.Background(), &policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: "baseline"}}); err != nil {
		t.Fatal(err)
	}
	waitCopies(t, c, ns, nil)
	waitCopies(t, c, limits, nil)
}

func TestHandMadePolicyInAClusterNamespace(t *testing.T) {
	s := testenv.StartHubWithSet(t, "plc-hand")
	c := s.Client
	s.AgentlessCluster(t, "plc-hand-1", map[string]string{"hand": "yes"})
	s.AgentlessCluster(t, "plc-hand-2", map[string]string{"hand": "yes"})
	s.AgentlessPlacement(t, "hand", map[string]string{"hand": "yes"})
	root := loadPolicy(t, "policy-namespace.yaml", s.Namespace)
	testenv.Create(t, c, root)
	// Someone made a policy of the copy's name, with OCM's labels, in plc-hand-1's namespace, and
	// says it complies.
	rootName := s.Namespace + "." + root.Name
	hand := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "plc-hand-1", Name: rootName,
		Labels: map[string]string{policyv1.RootPolicyLabel: rootName, policyv1.ClusterNameLabel: "plc-hand-1", policyv1.ClusterNamespaceLabel: "plc-hand-1"}},
		Spec: policyv1.PolicySpec{PolicyTemplates: []*policyv1.PolicyTemplate{}}}
	testenv.Create(t, c, hand)
	hand.Status.ComplianceState = policyv1.Compliant
	if err := c.Status().Update(context.Background(), hand); err != nil {
		t.Fatal(err)
	}
	bind(t, s, "hand", "hand", subject(policyv1.Kind, root.Name))

	waitCopies(t, c, root, func(m map[string]*policyv1.Policy) string {
		if m["plc-hand-2"].Annotations[policyv1.RootPolicyUIDAnnotation] == "" {
			return "plc-hand-2 has no copy made by the hub"
		}
		return ""
	}, "plc-hand-1", "plc-hand-2")
	report(t, c, root, "plc-hand-2", policyv1.Compliant)
	// plc-hand-1's hand-made "Compliant" is not the cluster's word: the root shows it silent.
	placement := []*policyv1.Placement{{PlacementBinding: "hand", Placement: "hand"}}
	waitRoot(t, c, root, policyv1.PolicyStatus{Placement: placement,
		Status: perCluster(map[string]policyv1.ComplianceState{"plc-hand-2": policyv1.Compliant}, "plc-hand-1", "plc-hand-2")})
	testenv.WaitFor(t, wait, "the root's event naming the hand-made policy", func(ctx context.Context) (bool, string, error) {
		l := &eventsv1.EventList{}
		if err := c.List(ctx, l, client.InNamespace(s.Namespace)); err != nil {
			return false, "", err
		}
		for _, e := range l.Items {
			if e.Reason == "ReplicatedPolicyNotOwned" && e.Regarding.Name == root.Name && strings.Contains(e.Note, "plc-hand-1/"+rootName) {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("%d events, none ReplicatedPolicyNotOwned", len(l.Items)), nil
	})

	// Unbound, the hub deletes its own copy and leaves the hand-made one as it was.
	if err := c.Delete(context.Background(), &policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: "hand"}}); err != nil {
		t.Fatal(err)
	}
	waitCopies(t, c, root, nil, "plc-hand-1")
	got := &policyv1.Policy{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(hand), got); err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.PolicyTemplates) != 0 || got.Annotations[policyv1.RootPolicyUIDAnnotation] != "" || got.Status.ComplianceState != policyv1.Compliant {
		t.Errorf("the hand-made policy was changed: %+v", got)
	}
}

func TestBadInput(t *testing.T) {
	s := testenv.StartHubWithSet(t, "plc-bad")
	c := s.Client
	ctx := context.Background()
	p := loadPolicy(t, "policy-namespace.yaml", s.Namespace)
	p.Spec.RemediationAction = "audit"
	if err := c.Create(ctx, p); err == nil || !strings.Contains(err.Error(), "spec.remediationAction") {
		t.Errorf("a remediationAction of audit: got %v, want a refusal naming spec.remediationAction", err)
	}
	b := &policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: "b"},
		PlacementRef: policyv1.PlacementSubject{APIGroup: "cluster.open-cluster-management.io", Kind: "Placement", Name: "p"},
		Subjects:     []policyv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "admin"}}}
	if err := c.Create(ctx, b); err == nil || !strings.Contains(err.Error(), "subjects[0].kind") {
		t.Errorf("a binding of a Role: got %v, want a refusal naming subjects[0].kind", err)
	}
	b.Subjects = nil
	if err := c.Create(ctx, b); err == nil || !strings.Contains(err.Error(), "subjects") {
		t.Errorf("a binding of nothing: got %v, want a refusal naming subjects", err)
	}
}

// TestPlacementByCompliance: the hub keeps each cluster's compliance as the AddOnPlacementScore
// governance-compliance, so a placement can require compliance with a policy through OCM's own CEL
// predicate (Flotilla's extension).
func TestPlacementByCompliance(t *testing.T) {
	s := testenv.StartHubWithSet(t, "plc-score")
	c := s.Client
	ctx := context.Background()
	for _, n := range []string{"plc-score-1", "plc-score-2"} {
		s.AgentlessCluster(t, n, map[string]string{"residency": "eu"})
	}
	s.AgentlessPlacement(t, "eu", map[string]string{"residency": "eu"})
	root := loadPolicy(t, "policy-namespace.yaml", s.Namespace)
	root.Name = "data-residency-eu"
	testenv.Create(t, c, root)
	bind(t, s, "eu", "eu", subject(policyv1.Kind, root.Name))
	waitCopies(t, c, root, nil, "plc-score-1", "plc-score-2")
	report(t, c, root, "plc-score-1", policyv1.Compliant)
	report(t, c, root, "plc-score-2", policyv1.NonCompliant)

	name := s.Namespace + ".data-residency-eu"
	for cluster, want := range map[string]int32{"plc-score-1": policy.ScoreCompliant, "plc-score-2": policy.ScoreNonCompliant} {
		testenv.WaitFor(t, wait, "the compliance score of "+cluster, func(ctx context.Context) (bool, string, error) {
			got := &clusterv1alpha1.AddOnPlacementScore{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: policy.ComplianceScoreName}, got); err != nil {
				return false, "", client.IgnoreNotFound(err)
			}
			return slices.Contains(got.Status.Scores, clusterv1alpha1.AddOnPlacementScoreItem{Name: name, Value: want}), fmt.Sprint(got.Status.Scores), nil
		})
	}

	// Training that must stay on clusters that comply.
	regulated := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: "regulated"}, Spec: clusterv1beta1.PlacementSpec{
		Tolerations: testenv.NoAgentTolerations(),
		Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{CelSelector: clusterv1beta1.ClusterCelSelector{
			CelExpressions: []string{fmt.Sprintf(`managedCluster.scores(%q).exists(s, s.name == %q && s.value == 100)`, policy.ComplianceScoreName, name)}}}}}}}
	testenv.Create(t, c, regulated)
	decided := func(want ...string) {
		testenv.WaitFor(t, wait, fmt.Sprintf("placement regulated to decide %v", want), func(ctx context.Context) (bool, string, error) {
			cs, err := rollout.PlacementClusters(ctx, c, s.Namespace, "regulated")
			var got []string
			for _, x := range cs {
				got = append(got, x.Name)
			}
			slices.Sort(got)
			return err == nil && slices.Equal(got, want), fmt.Sprint(got), err
		})
	}
	decided("plc-score-1")
	// plc-score-2 is put right: it joins; plc-score-1 drifts: it leaves.
	report(t, c, root, "plc-score-2", policyv1.Compliant)
	report(t, c, root, "plc-score-1", policyv1.NonCompliant)
	decided("plc-score-2")

	// A score of that name the hub did not make (here in a cluster no policy is placed on, where
	// the hub keeps none) is neither deleted nor written.
	s.AgentlessCluster(t, "plc-score-3", map[string]string{"residency": "us"})
	hand := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Namespace: "plc-score-3", Name: policy.ComplianceScoreName}}
	testenv.Create(t, c, hand)
	hand.Status.Scores = []clusterv1alpha1.AddOnPlacementScoreItem{{Name: name, Value: policy.ScoreCompliant}}
	if err := c.Status().Update(ctx, hand); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, &policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: "eu"}}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, wait, "the scores removed with the copies", func(ctx context.Context) (bool, string, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: "plc-score-1", Name: policy.ComplianceScoreName}, &clusterv1alpha1.AddOnPlacementScore{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), client.IgnoreNotFound(err)
	})
	got := &clusterv1alpha1.AddOnPlacementScore{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(hand), got); err != nil || len(got.Status.Scores) != 1 || got.Labels[policy.ComplianceScoreLabel] != "" {
		t.Errorf("the hand-made score in plc-score-3: %v %+v, want it as it was made", err, got)
	}
}
