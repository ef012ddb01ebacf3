//go:build integration

package governance

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestDependencies: a policy whose dependency is not yet in the state it asks for is Pending with
// OCM's message and its template is not on the cluster; once the dependency complies, the template
// is applied and enforced. A template with ignorePending whose own extraDependencies never hold
// stays Pending without holding its policy's compliance back.
func TestDependencies(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	ns := f.set.Namespace
	namespace := configPolicy(ns, "deps-namespace", "musthave", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"deps-ns"}}`)
	quota := configPolicy(ns, "deps-quota", "musthave", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"deps-ns","name":"quota"},"data":{"gpus":"8"}}`)
	quota.Spec.RemediationAction = "enforce"
	quota.Spec.Dependencies = []policyv1.PolicyDependency{{TypeMeta: metav1.TypeMeta{APIVersion: "policy.open-cluster-management.io/v1", Kind: "Policy"},
		Name: namespace.Name, Compliance: policyv1.Compliant}}
	optional := `{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"deps-optional"},
		"spec":{"remediationAction":"inform","object-templates":[{"complianceType":"musthave","objectDefinition":{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"}}}]}}`
	quota.Spec.PolicyTemplates = append(quota.Spec.PolicyTemplates, &policyv1.PolicyTemplate{
		ObjectDefinition: runtime.RawExtension{Raw: []byte(optional)}, IgnorePending: true,
		ExtraDependencies: []policyv1.PolicyDependency{{TypeMeta: metav1.TypeMeta{APIVersion: "policy.open-cluster-management.io/v1", Kind: "Policy"},
			Name: "never-made", Compliance: policyv1.Compliant}},
	})
	testenv.Create(t, f.hub, namespace)
	testenv.Create(t, f.hub, quota)
	f.bind(t, namespace.Name, quota.Name)

	f.waitReport(t, namespace, policyv1.NonCompliant, "namespaces [deps-ns] not found")
	f.waitReport(t, quota, policyv1.Pending,
		"Pending; template-error; Dependencies were not satisfied: 1 dependencies are still pending (Policy "+ns+".deps-namespace)",
		"Pending; template-error; Dependencies were not satisfied: 2 dependencies are still pending (Policy "+ns+".deps-namespace, Policy "+ns+".never-made)")
	err := f.spoke.Get(ctx, client.ObjectKey{Namespace: f.cluster, Name: "deps-quota"}, &policyv1.ConfigurationPolicy{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the pending template is on the cluster: %v", err)
	}

	// The dependency complies: the template goes to the cluster and is enforced; the optional
	// template's pending is ignored.
	testenv.Update(t, f.hub, namespace, func() { namespace.Spec.RemediationAction = "enforce" })
	f.waitReport(t, quota, policyv1.Compliant, "Compliant; notification - configmaps [quota]",
		"Pending; template-error; Dependencies were not satisfied: 1 dependencies are still pending (Policy "+ns+".never-made)")
	if err := f.spoke.Get(ctx, client.ObjectKey{Namespace: "deps-ns", Name: "quota"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("the quota ConfigMap: %v", err)
	}
}
