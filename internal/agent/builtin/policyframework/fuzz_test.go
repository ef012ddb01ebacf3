package policyframework

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
)

// FuzzTemplates decodes arbitrary policy templates (whoever writes policies on the hub writes
// them): no panic, and each template yields either a ConfigurationPolicy named as it says in the
// cluster's namespace or a problem, never both or neither.
func FuzzTemplates(f *testing.F) {
	f.Add(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"a"},"spec":{"object-templates":[{"complianceType":"musthave","objectDefinition":{"kind":"Namespace"}}]}}`)
	f.Add(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"a"},"spec":{"severity":7}}`)
	f.Add(`{"kind":"ConfigurationPolicy"}`)
	f.Add(`null`)
	f.Fuzz(func(t *testing.T, def string) {
		p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "gov.p"},
			Spec: policyv1.PolicySpec{PolicyTemplates: []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: []byte(def)}}}}}
		for _, tm := range templates(p, "c1", map[string]string{}) {
			if (tm.object == nil) == (tm.problem == "") {
				t.Fatalf("template %q: object %v, problem %q", def, tm.object, tm.problem)
			}
			if tm.object != nil && (tm.object.Namespace != "c1" || tm.object.Name != tm.name || tm.name == "") {
				t.Fatalf("template %q made %s/%s (name %q)", def, tm.object.Namespace, tm.object.Name, tm.name)
			}
		}
	})
}
