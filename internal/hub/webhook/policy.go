package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
)

// PolicyGroup is the API group of Policies.
const PolicyGroup = "policy.open-cluster-management.io"

// PolicyPath is where the Policy webhook is served, PolicyWebhookName its name in the
// configuration.
const (
	PolicyPath        = "/validate-policies"
	PolicyWebhookName = "policies.hub.flotilla.io"
)

// PolicyHandler validates Policies (ReviewPolicy).
func PolicyHandler(s *runtime.Scheme) admission.Handler {
	return handler(admission.NewDecoder(s), nil, func(_ context.Context, _ Authorizer, _ authenticationv1.UserInfo, old, cur *policyv1.Policy) ([]string, error) {
		return ReviewPolicy(old, cur), nil
	})
}

// ReviewPolicy refuses what OCM's policy webhook refuses: a new root policy whose namespace and
// name together exceed 62 characters (its copies' name, <namespace>.<name>, is also a label
// value, at most 63), and a policy that sets no remediationAction while one of its
// ConfigurationPolicy templates sets none either. Copies (label root-policy) pass: the hub
// writes them from roots that passed.
func ReviewPolicy(old, cur *policyv1.Policy) []string {
	if cur.IsReplicated() {
		return nil
	}
	var denials []string
	if n := utf8.RuneCountInString(cur.Namespace) + utf8.RuneCountInString(cur.Name); old == nil && n > policyv1.MaxReplicatedNameLength-1 {
		denials = append(denials, fmt.Sprintf("policies %q in namespace %q: metadata.name: namespace and name together are %d characters, "+
			"more than 62: the copy on each cluster is named %s.%s, which must fit a label value (63); choose a shorter name",
			cur.Name, cur.Namespace, n, cur.Namespace, cur.Name))
	}
	if cur.Spec.RemediationAction != "" {
		return denials
	}
	for i, t := range cur.Spec.PolicyTemplates {
		if t == nil {
			continue
		}
		var def struct {
			Kind string `json:"kind"`
			Spec struct {
				RemediationAction *string `json:"remediationAction"`
			} `json:"spec"`
		}
		if json.Unmarshal(t.ObjectDefinition.Raw, &def) == nil && def.Kind == "ConfigurationPolicy" && def.Spec.RemediationAction == nil {
			denials = append(denials, fmt.Sprintf("policies %q in namespace %q: spec.remediationAction and spec.policy-templates[%d].objectDefinition.spec.remediationAction "+
				"are both unset: set either to inform or enforce", cur.Name, cur.Namespace, i))
		}
	}
	return denials
}
