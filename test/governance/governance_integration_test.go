//go:build integration

package governance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/agent/addon"
	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/agent/builtin/configpolicy"
	"github.com/flotilla/flotilla/internal/agent/builtin/policyframework"
	"github.com/flotilla/flotilla/internal/apitest"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const wait = 90 * time.Second

// loadPolicy reads a policy-collection policy from test/policy/testdata into ns.
func loadPolicy(t *testing.T, file, ns string) *policyv1.Policy {
	t.Helper()
	return apitest.ReadPolicy(t, "../policy/testdata/"+file, ns)
}

// configPolicy is a Policy of one ConfigurationPolicy named name with one object template.
func configPolicy(ns, name, complianceType, object string) *policyv1.Policy {
	def := fmt.Sprintf(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":%q},
		"spec":{"remediationAction":"inform","object-templates":[{"complianceType":%q,"objectDefinition":%s}]}}`, name, complianceType, object)
	return &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: policyv1.PolicySpec{
		PolicyTemplates: []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: []byte(def)}}}}}
}

type fleet struct {
	hub, spoke client.Client
	set        *testenv.BoundSet
	cluster    string
	agentHub   client.Client
}

// start runs the hub, joins the spoke, runs the add-on agent with the two governance add-ons and
// enables them, and puts the cluster in a set bound into a new namespace with a placement "all".
func start(t *testing.T) *fleet {
	t.Helper()
	env := testenv.Start(t, testenv.Options{Spokes: 1, CRDs: true})
	env.StartHub(t, testenv.TestHubOptions())
	one := env.JoinSpokes(t)[0]
	hub := env.HubClient(t)
	spokeCfg := one.Spoke.RESTConfig()
	ad, err := addon.New(addon.Options{
		ClusterName: one.Name, AgentID: "agent-" + one.Name, Hub: one.Agent.Hub(), Spoke: spokeCfg,
		BuiltIns: builtin.NewManager(one.Name, spokeCfg, clock.RealClock{}, testr.New(t).WithName("builtin"),
			// An hour: every step of the tests is brought about by a watch, none by a resync.
			policyframework.AddOn{Resync: time.Hour}, configpolicy.AddOn{Resync: time.Hour}),
		InitialBackoff: 200 * time.Millisecond, MaxBackoff: 2 * time.Second,
		Log: testr.New(t).WithName("addon"),
	})
	if err != nil {
		t.Fatal(err)
	}
	testenv.RunUntilCleanup(t, ad.Run)
	for _, name := range []string{policyframework.Name, configpolicy.Name} {
		testenv.Create(t, hub, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: name}})
	}
	set := env.NewBoundSet(t, hub, "gov")
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: one.Name}}
	testenv.Update(t, hub, mc, func() {
		if mc.Labels == nil {
			mc.Labels = map[string]string{}
		}
		mc.Labels[clusterv1beta2.ClusterSetLabel] = set.Set
	})
	set.AgentlessPlacement(t, "all", nil)
	spoke, err := client.New(spokeCfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return &fleet{hub: hub, spoke: spoke, set: set, cluster: one.Name, agentHub: one.Agent.Hub().Current().Client}
}

func (f *fleet) bind(t *testing.T, policies ...string) {
	t.Helper()
	b := &policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: f.set.Namespace, Name: "all"},
		PlacementRef: policyv1.PlacementSubject{APIGroup: "cluster.open-cluster-management.io", Kind: "Placement", Name: "all"}}
	for _, p := range policies {
		b.Subjects = append(b.Subjects, policyv1.Subject{APIGroup: policyv1.GroupVersion.Group, Kind: policyv1.Kind, Name: p})
	}
	testenv.Create(t, f.hub, b)
}

// waitReport waits until the cluster's copy of root reports state with a latest message
// containing each of want, and the root says the same of the cluster; it returns the copy.
func (f *fleet) waitReport(t *testing.T, root *policyv1.Policy, state policyv1.ComplianceState, want ...string) *policyv1.Policy {
	t.Helper()
	copyKey := client.ObjectKey{Namespace: f.cluster, Name: root.Namespace + "." + root.Name}
	got := &policyv1.Policy{}
	testenv.WaitFor(t, wait, fmt.Sprintf("%s to report %s %q", copyKey, state, want), func(ctx context.Context) (bool, string, error) {
		if err := f.hub.Get(ctx, copyKey, got); err != nil {
			return false, "", client.IgnoreNotFound(err)
		}
		var latest []string
		for _, d := range got.Status.Details {
			if len(d.History) > 0 {
				latest = append(latest, d.History[0].Message)
			}
		}
		msg := strings.Join(latest, " | ")
		if got.Status.ComplianceState != state {
			return false, fmt.Sprintf("copy %q: %s", got.Status.ComplianceState, msg), nil
		}
		for _, w := range want {
			if !strings.Contains(msg, w) {
				return false, "copy says " + msg, nil
			}
		}
		r := &policyv1.Policy{}
		if err := f.hub.Get(ctx, client.ObjectKeyFromObject(root), r); err != nil {
			return false, "", err
		}
		if len(r.Status.Status) != 1 || r.Status.Status[0].ComplianceState != state || r.Status.ComplianceState != state {
			return false, fmt.Sprintf("root status %+v", r.Status), nil
		}
		return true, "", nil
	})
	return got
}

func TestInformEnforceAndDrift(t *testing.T) {
	f := start(t)
	ns := loadPolicy(t, "policy-namespace.yaml", f.set.Namespace)
	limits := loadPolicy(t, "policy-limitmemory.yaml", f.set.Namespace)
	testenv.Create(t, f.hub, ns)
	testenv.Create(t, f.hub, limits)
	f.bind(t, ns.Name, limits.Name)

	// Inform: the spoke has neither; the cluster says so in OCM's words.
	got := f.waitReport(t, ns, policyv1.NonCompliant, "NonCompliant; violation - namespaces [prod] not found")
	if d := got.Status.Details; len(d) != 1 || d[0].TemplateMeta.Name != "policy-namespace-example" || d[0].ComplianceState != policyv1.NonCompliant {
		t.Errorf("the copy's details: %+v", d)
	}
	f.waitReport(t, limits, policyv1.NonCompliant, "NonCompliant; violation - limitranges [mem-limit-range] not found in namespace default")
	cp := &policyv1.ConfigurationPolicy{}
	if err := f.spoke.Get(context.Background(), client.ObjectKey{Namespace: f.cluster, Name: "policy-namespace-example"}, cp); err != nil {
		t.Fatalf("the template is not on the spoke in the cluster's namespace: %v", err)
	}
	if cp.Labels[policyframework.PolicyLabel] != f.set.Namespace+".policy-namespace" || cp.Spec.Severity != "low" {
		t.Errorf("the spoke's ConfigurationPolicy: labels %v, severity %q", cp.Labels, cp.Spec.Severity)
	}

	// Enforce (the root's remediationAction overrides the template's): the spoke gets both.
	for _, p := range []*policyv1.Policy{ns, limits} {
		testenv.Update(t, f.hub, p, func() { p.Spec.RemediationAction = "enforce" })
	}
	got = f.waitReport(t, ns, policyv1.Compliant, "Compliant; notification - namespaces [prod] found as specified")
	history := got.Status.Details[0].History
	if len(history) < 2 || !strings.HasPrefix(history[len(history)-1].Message, "NonCompliant; violation - namespaces [prod] not found") {
		t.Errorf("the history does not keep the first report last: %+v", history)
	}
	f.waitReport(t, limits, policyv1.Compliant, "limitranges [mem-limit-range] found as specified in namespace default")
	if err := f.spoke.Get(context.Background(), client.ObjectKey{Name: "prod"}, &corev1.Namespace{}); err != nil {
		t.Errorf("namespace prod on the spoke: %v", err)
	}

	// Drift: someone deletes the LimitRange, and it comes back.
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "mem-limit-range"}}
	if err := f.spoke.Delete(context.Background(), lr); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, wait, "the LimitRange put back", func(ctx context.Context) (bool, string, error) {
		err := f.spoke.Get(ctx, client.ObjectKeyFromObject(lr), lr)
		return err == nil, fmt.Sprint(err), client.IgnoreNotFound(err)
	})

	// Inform again: a changed LimitRange is reported, not put right.
	testenv.Update(t, f.hub, limits, func() { limits.Spec.RemediationAction = "inform" })
	testenv.Update(t, f.spoke, lr, func() { lr.Spec.Limits[0].Default[corev1.ResourceMemory] = resource.MustParse("1Gi") })
	got = f.waitReport(t, limits, policyv1.NonCompliant, "limitranges [mem-limit-range] found but not as specified in namespace default")
	// What `flotilla explain policy` shows: the difference, field by field.
	if d := got.Status.Details[0]; len(d.RelatedObjects) != 1 || d.RelatedObjects[0].Properties == nil ||
		d.RelatedObjects[0].Properties.Diff != "spec.limits[0].default.memory is 1Gi, want 512Mi" {
		t.Errorf("the copy's related objects: %+v", d.RelatedObjects)
	}

	// Unbound: the copies go, and with them the spoke's ConfigurationPolicies; what enforce made stays.
	if err := f.hub.Delete(context.Background(), &policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: f.set.Namespace, Name: "all"}}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, wait, "the spoke's ConfigurationPolicies removed", func(ctx context.Context) (bool, string, error) {
		l := &policyv1.ConfigurationPolicyList{}
		if err := f.spoke.List(ctx, l, client.InNamespace(f.cluster)); err != nil {
			return false, "", err
		}
		return len(l.Items) == 0, fmt.Sprintf("%d left", len(l.Items)), nil
	})
}

func TestMustNotHaveAndBadTemplates(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "ml-team-admin"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "ml-team"}}}
	testenv.Create(t, f.spoke, crb)
	noAdmin := configPolicy(f.set.Namespace, "no-ml-admin", "mustnothave",
		`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"ml-team-admin"}}`)
	// A kind the cluster does not serve, and a template of a kind it does not evaluate.
	unserved := configPolicy(f.set.Namespace, "unserved-kind", "musthave", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"}}`)
	other := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: f.set.Namespace, Name: "cert-policy"}, Spec: policyv1.PolicySpec{
		PolicyTemplates: []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: []byte(
			`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"CertificatePolicy","metadata":{"name":"certs"},"spec":{}}`)}}}}}
	noKind := configPolicy(f.set.Namespace, "no-kind", "musthave", `{"apiVersion":"v1","metadata":{"name":"x"}}`)
	for _, p := range []*policyv1.Policy{noAdmin, unserved, other, noKind} {
		testenv.Create(t, f.hub, p)
	}
	f.bind(t, noAdmin.Name, unserved.Name, other.Name, noKind.Name)

	f.waitReport(t, noAdmin, policyv1.NonCompliant, "violation - clusterrolebindings [ml-team-admin] found")
	f.waitReport(t, unserved, policyv1.NonCompliant, "couldn't find mapping resource with kind Widget in example.com/v1")
	f.waitReport(t, other, policyv1.NonCompliant, "spec.policy-templates[0].objectDefinition is a CertificatePolicy")
	f.waitReport(t, noKind, policyv1.NonCompliant, "spec.object-templates[0].objectDefinition needs apiVersion and kind")

	testenv.Update(t, f.hub, noAdmin, func() { noAdmin.Spec.RemediationAction = "enforce" })
	f.waitReport(t, noAdmin, policyv1.Compliant, "clusterrolebindings [ml-team-admin]")
	if err := f.spoke.Get(ctx, client.ObjectKeyFromObject(crb), crb); !apierrors.IsNotFound(err) {
		t.Errorf("enforce mustnothave left the ClusterRoleBinding: %v", err)
	}
}

func TestAgentIdentityOnPolicies(t *testing.T) {
	f := start(t)
	p := configPolicy(f.set.Namespace, "needs-ns", "musthave", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"needed"}}`)
	testenv.Create(t, f.hub, p)
	f.bind(t, p.Name)
	copyPolicy := f.waitReport(t, p, policyv1.NonCompliant, "namespaces [needed] not found")
	ctx := context.Background()

	// The agent reports status; it cannot change what the hub asks of it.
	mine := copyPolicy.DeepCopy()
	mine.Spec.Disabled = true
	if err := f.agentHub.Update(ctx, mine); !apierrors.IsForbidden(err) {
		t.Errorf("the agent updated its copy's spec: %v, want Forbidden", err)
	}
	if err := f.agentHub.Delete(ctx, copyPolicy.DeepCopy()); !apierrors.IsForbidden(err) {
		t.Errorf("the agent deleted its copy: %v, want Forbidden", err)
	}
	// Nor read or report on the root, in the policy's namespace.
	if err := f.agentHub.Get(ctx, client.ObjectKeyFromObject(p), &policyv1.Policy{}); !apierrors.IsForbidden(err) {
		t.Errorf("the agent read the root policy: %v, want Forbidden", err)
	}
	root := &policyv1.Policy{}
	if err := f.hub.Get(ctx, client.ObjectKeyFromObject(p), root); err != nil {
		t.Fatal(err)
	}
	root.Status.ComplianceState = policyv1.Compliant
	if err := f.agentHub.Status().Update(ctx, root); !apierrors.IsForbidden(err) {
		t.Errorf("the agent wrote the root's status: %v, want Forbidden", err)
	}
	// The add-on reports with a status patch: refused on the root too.
	if err := f.agentHub.Status().Patch(ctx, root, client.MergeFrom(&policyv1.Policy{})); !apierrors.IsForbidden(err) {
		t.Errorf("the agent patched the root's status: %v, want Forbidden", err)
	}
	// Nor create a policy in its own namespace (a root there would be placed on others).
	made := configPolicy(f.cluster, "mine", "musthave", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}`)
	if err := f.agentHub.Create(ctx, made); !apierrors.IsForbidden(err) {
		t.Errorf("the agent created a policy: %v, want Forbidden", err)
	}

	// Nor read or report on another cluster's copy.
	f.set.AgentlessCluster(t, "gov-other", nil)
	other := &policyv1.Policy{}
	testenv.WaitFor(t, wait, "the copy on gov-other", func(ctx context.Context) (bool, string, error) {
		err := f.hub.Get(ctx, client.ObjectKey{Namespace: "gov-other", Name: copyPolicy.Name}, other)
		return err == nil, fmt.Sprint(err), client.IgnoreNotFound(err)
	})
	if err := f.agentHub.Get(ctx, client.ObjectKeyFromObject(other), &policyv1.Policy{}); !apierrors.IsForbidden(err) {
		t.Errorf("the agent read another cluster's copy: %v, want Forbidden", err)
	}
	other.Status.ComplianceState = policyv1.Compliant
	if err := f.agentHub.Status().Update(ctx, other); !apierrors.IsForbidden(err) {
		t.Errorf("the agent reported on another cluster's copy: %v, want Forbidden", err)
	}
	if err := f.agentHub.Status().Patch(ctx, other, client.MergeFrom(&policyv1.Policy{})); !apierrors.IsForbidden(err) {
		t.Errorf("the agent patched another cluster's copy's status: %v, want Forbidden", err)
	}
}

func TestPruneObjectBehavior(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	// One ConfigMap was there before the policy; the policy creates the other.
	testenv.Create(t, f.spoke, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "prune-kept"}, Data: map[string]string{"k": "v"}})
	p := configPolicy(f.set.Namespace, "prune", "musthave", `{}`)
	p.Spec.RemediationAction = "enforce"
	second := `{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"prune-2"},
		"spec":{"remediationAction":"enforce","pruneObjectBehavior":"DeleteIfCreated","object-templates":[
		{"complianceType":"musthave","objectDefinition":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"prune-kept","namespace":"default"},"data":{"k":"v"}}},
		{"complianceType":"musthave","objectDefinition":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"prune-made","namespace":"default"},"data":{"k":"v"}}}]}}`
	p.Spec.PolicyTemplates = []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: []byte(second)}}}
	testenv.Create(t, f.hub, p)
	f.bind(t, p.Name)
	f.waitReport(t, p, policyv1.Compliant, "configmaps [prune-kept] found as specified in namespace default", "configmaps [prune-made]")

	// The policy goes: DeleteIfCreated deletes what it made and keeps what it found.
	if err := f.hub.Delete(ctx, p); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, wait, "prune-made deleted with the policy", func(ctx context.Context) (bool, string, error) {
		err := f.spoke.Get(ctx, client.ObjectKey{Namespace: "default", Name: "prune-made"}, &corev1.ConfigMap{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), client.IgnoreNotFound(err)
	})
	if err := f.spoke.Get(ctx, client.ObjectKey{Namespace: "default", Name: "prune-kept"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("the ConfigMap the policy found was deleted: %v", err)
	}
	testenv.WaitFor(t, wait, "the spoke's ConfigurationPolicy gone", func(ctx context.Context) (bool, string, error) {
		err := f.spoke.Get(ctx, client.ObjectKey{Namespace: f.cluster, Name: "prune-2"}, &policyv1.ConfigurationPolicy{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), client.IgnoreNotFound(err)
	})
}

// TestOnlyTheClusterNamespace: a ConfigurationPolicy someone makes on the cluster outside the
// namespace named after it is not the add-on's to evaluate or enforce (as OCM's controller
// watches only that namespace): it would otherwise act with the add-on's rights for whoever may
// create one anywhere.
func TestOnlyTheClusterNamespace(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	planted := &policyv1.ConfigurationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "planted"}}
	if err := json.Unmarshal([]byte(`{"spec":{"remediationAction":"enforce","object-templates":[{"complianceType":"musthave",
		"objectDefinition":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"default","name":"planted-by-someone"}}}]}}`), planted); err != nil {
		t.Fatal(err)
	}
	testenv.Create(t, f.spoke, planted)
	// A policy through the hub is evaluated meanwhile: the add-on ran its passes.
	p := configPolicy(f.set.Namespace, "passes", "musthave", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"}}`)
	testenv.Create(t, f.hub, p)
	f.bind(t, p.Name)
	f.waitReport(t, p, policyv1.Compliant, "namespaces [default] found as specified")
	if err := f.spoke.Get(ctx, client.ObjectKeyFromObject(planted), planted); err != nil {
		t.Fatal(err)
	}
	if planted.Status.ComplianceState != "" {
		t.Errorf("the ConfigurationPolicy outside the cluster's namespace was evaluated: %+v", planted.Status)
	}
	if err := f.spoke.Get(ctx, client.ObjectKey{Namespace: "default", Name: "planted-by-someone"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("its ConfigMap: %v, want NotFound", err)
	}
}
