//go:build integration

package install

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/internal/agent/builtin/configpolicy"
	"github.com/flotilla/flotilla/internal/agent/builtin/policyframework"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestGovernanceUnderTheChart runs the governance add-ons in an agent installed by its chart,
// with the chart's ServiceAccounts only and policy.enforce granting edit in one namespace. The
// chart brings the ConfigurationPolicy CRD and the agent keeps the ConfigurationPolicies; what
// policies check and enforce is done as flotilla-policy. Enforce creates in the granted
// namespace; in another it reports the refusal and creates nothing, though the agent itself
// holds admin there (work.executionClusterRole's default: without the impersonation the
// ConfigMap would be created); and no policy reads the agent's hub credentials.
func TestGovernanceUnderTheChart(t *testing.T) {
	const granted = "lp-gov-enforce"
	env := testenv.Start(t, testenv.Options{Spokes: 1})
	ctx := context.Background()
	ensureNamespace(t, env.Spokes[0], granted)
	f := installFleetWith(t, nil, map[string]any{"policy": map[string]any{"enforce": map[string]any{"clusterRole": "edit", "namespaces": []any{granted}}}})
	admin, spoke := f.admin, f.spoke
	if _, err := spoke.Client.RbacV1().ClusterRoleBindings().Get(ctx, "flotilla-agent-work-execution", metav1.GetOptions{}); err != nil {
		t.Fatalf("the agent should hold admin here (OCM's mode), so that only the impersonation stops enforce: %v", err)
	}
	for _, name := range []string{policyframework.Name, configpolicy.Name} {
		testenv.Create(t, admin, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: name}})
	}

	const ns = "lp-gov"
	testenv.Create(t, admin, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	testenv.Create(t, admin, &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "default"},
	})
	testenv.Create(t, admin, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "all"}})
	configMap := func(namespace string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":%q,"name":"lp-policy"},"data":{"k":"v"}}`, namespace)
	}
	policies := map[string]string{
		"lp-granted":  configMap(granted),
		"lp-denied":   configMap("default"),
		"lp-hub-cred": `{"apiVersion":"v1","kind":"Secret","metadata":{"namespace":"` + agentNamespace + `","name":"hub-kubeconfig-secret"},"data":{"kubeconfig":"eA=="}}`,
	}
	binding := &policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "all"},
		PlacementRef: policyv1.PlacementSubject{APIGroup: "cluster.open-cluster-management.io", Kind: "Placement", Name: "all"}}
	for name, object := range policies {
		def := fmt.Sprintf(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":%q},
			"spec":{"remediationAction":"inform","object-templates":[{"complianceType":"musthave","objectDefinition":%s}]}}`, name, object)
		testenv.Create(t, admin, &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: policyv1.PolicySpec{
			RemediationAction: "enforce", PolicyTemplates: []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: []byte(def)}}}}})
		binding.Subjects = append(binding.Subjects, policyv1.Subject{APIGroup: policyv1.GroupVersion.Group, Kind: policyv1.Kind, Name: name})
	}
	testenv.Create(t, admin, binding)

	// report waits for the cluster's copy of the policy to report state, and returns its latest message.
	report := func(name string, state policyv1.ComplianceState) string {
		t.Helper()
		var msg string
		testenv.WaitFor(t, 90*time.Second, name+" to report "+string(state), func(ctx context.Context) (bool, string, error) {
			p := &policyv1.Policy{}
			if err := admin.Get(ctx, client.ObjectKey{Namespace: clusterName, Name: ns + "." + name}, p); err != nil {
				return false, "", client.IgnoreNotFound(err)
			}
			if len(p.Status.Details) == 1 && len(p.Status.Details[0].History) > 0 {
				msg = p.Status.Details[0].History[0].Message
			}
			return p.Status.ComplianceState == state, fmt.Sprintf("%q: %s", p.Status.ComplianceState, msg), nil
		})
		return msg
	}
	if msg := report("lp-granted", policyv1.Compliant); !strings.Contains(msg, "configmaps [lp-policy] was created successfully in namespace "+granted) {
		t.Errorf("enforce where edit is granted: %q", msg)
	}
	if _, err := spoke.Client.CoreV1().ConfigMaps(granted).Get(ctx, "lp-policy", metav1.GetOptions{}); err != nil {
		t.Errorf("the enforced ConfigMap in %s: %v", granted, err)
	}
	policyUser := "system:serviceaccount:" + agentNamespace + ":flotilla-policy"
	for name, what := range map[string]string{"lp-denied": "creating configmaps lp-policy", "lp-hub-cred": "reading secrets hub-kubeconfig-secret"} {
		msg := report(name, policyv1.NonCompliant)
		if !strings.Contains(msg, what) || !strings.Contains(msg, "forbidden") || !strings.Contains(msg, policyUser) {
			t.Errorf("%s: %q, want %s forbidden to %s", name, msg, what, policyUser)
		}
	}
	if _, err := spoke.Client.CoreV1().ConfigMaps("default").Get(ctx, "lp-policy", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ConfigMap enforce may not create in default: %v, want NotFound", err)
	}
	s, err := spoke.Client.CoreV1().Secrets(agentNamespace).Get(ctx, "hub-kubeconfig-secret", metav1.GetOptions{})
	if err != nil || string(s.Data["kubeconfig"]) == "x" {
		t.Errorf("the agent's hub credentials after a policy that enforces them: %v", err)
	}
}
