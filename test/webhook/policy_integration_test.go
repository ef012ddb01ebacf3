//go:build integration

package webhook

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestPolicyValidation: the API server asks the hub about Policies, which refuses what OCM's
// policy webhook refuses, naming the field and the fix.
func TestPolicyValidation(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	startHub(t, env)
	c := admin(t, env)
	ns := env.Namespace(t, env.Hub)
	tmpl := func(def string) []*policyv1.PolicyTemplate {
		return []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: []byte(def)}}}
	}
	long := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: strings.Repeat("p", 63-len(ns))},
		Spec: policyv1.PolicySpec{RemediationAction: "inform", PolicyTemplates: []*policyv1.PolicyTemplate{}}}
	eventually(t, "the webhook to answer", func(ctx context.Context) error {
		err := c.Create(ctx, long.DeepCopy())
		if err == nil || !strings.Contains(err.Error(), "denied") {
			return fmt.Errorf("creating a policy of %d characters with its namespace: %v, want a denial", len(ns)+len(long.Name), err)
		}
		return nil
	})
	denied(t, "a policy whose copies' name exceeds a label value", c.Create(context.Background(), long.DeepCopy()),
		"metadata.name: namespace and name together are 63 characters, more than 62")
	none := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-action"},
		Spec: policyv1.PolicySpec{PolicyTemplates: tmpl(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"x"},"spec":{}}`)}}
	denied(t, "a policy with no remediationAction anywhere", c.Create(context.Background(), none),
		"spec.remediationAction and spec.policy-templates[0].objectDefinition.spec.remediationAction are both unset: set either to inform or enforce")
	ok := long.DeepCopy()
	ok.Name = strings.Repeat("p", 62-len(ns))
	if err := c.Create(context.Background(), ok); err != nil {
		t.Errorf("a policy of 62 characters with its namespace: %v", err)
	}
}
