package policyframework

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/config/crd"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
)

// PolicyLabel names, on a ConfigurationPolicy the add-on made, the replicated policy it comes
// from (OCM's label).
const PolicyLabel = "policy.open-cluster-management.io/policy"

// template is one policy template as the cluster gets it: the ConfigurationPolicy to keep on
// the cluster, or why there is none (problem, reported as the template's violation).
type template struct {
	name    string
	object  *policyv1.ConfigurationPolicy
	problem string
}

// templates decodes p's templates into the ConfigurationPolicies the cluster gets in namespace
// ns. A template of another kind, one that does not decode, one without a name, and one whose
// name an earlier template (of any policy: taken) holds get a problem instead.
func templates(p *policyv1.Policy, ns string, taken map[string]string) []template {
	out := make([]template, 0, len(p.Spec.PolicyTemplates))
	for i, pt := range p.Spec.PolicyTemplates {
		field := fmt.Sprintf("spec.policy-templates[%d].objectDefinition", i)
		t := template{}
		var head struct {
			APIVersion string            `json:"apiVersion"`
			Kind       string            `json:"kind"`
			Metadata   metav1.ObjectMeta `json:"metadata"`
		}
		if pt == nil || len(pt.ObjectDefinition.Raw) == 0 {
			t.problem = field + " is empty: give a ConfigurationPolicy"
			out = append(out, t)
			continue
		}
		if err := json.Unmarshal(pt.ObjectDefinition.Raw, &head); err != nil {
			t.problem = fmt.Sprintf("%s is not an object: %v", field, err)
			out = append(out, t)
			continue
		}
		t.name = head.Metadata.Name
		switch {
		case head.Kind != "ConfigurationPolicy" || !strings.HasPrefix(head.APIVersion, policyv1.GroupVersion.Group+"/"):
			t.problem = fmt.Sprintf("%s is a %s of %s, which this cluster does not evaluate: Flotilla's clusters evaluate "+
				"ConfigurationPolicy (policy.open-cluster-management.io/v1); run that kind's own controller, or use a ConfigurationPolicy", field, head.Kind, head.APIVersion)
		case t.name == "":
			t.problem = field + ".metadata.name is empty: name the ConfigurationPolicy"
		case taken[t.name] != "":
			t.problem = fmt.Sprintf("%s.metadata.name %s is the name of a template of policy %s on this cluster: template names must be unique on a cluster; rename one",
				field, t.name, taken[t.name])
		}
		if t.problem != "" {
			out = append(out, t)
			continue
		}
		cp := &policyv1.ConfigurationPolicy{}
		if err := json.Unmarshal(pt.ObjectDefinition.Raw, cp); err != nil {
			t.problem = fmt.Sprintf("%s does not decode as a ConfigurationPolicy: %v", field, err)
			out = append(out, t)
			continue
		}
		taken[t.name] = p.Name
		obj, err := desired(p, cp, ns)
		if err != nil {
			t.problem = fmt.Sprintf("%s: %v", field, err)
		}
		t.object = obj
		out = append(out, t)
	}
	return out
}

// desired is the ConfigurationPolicy kept on the cluster for template cp of p: its name, labels,
// annotations and spec, in the cluster's namespace, labeled as the add-on's and with p's
// remediationAction when p sets one, defaulted as the cluster's API server stores it (so that
// what the cluster has compares equal to it once applied).
func desired(p *policyv1.Policy, cp *policyv1.ConfigurationPolicy, ns string) (*policyv1.ConfigurationPolicy, error) {
	labels := maps.Clone(cp.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[PolicyLabel] = p.Name
	labels[builtinaddon.Label] = Name
	out := &policyv1.ConfigurationPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: policyv1.GroupVersion.String(), Kind: "ConfigurationPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: cp.Name, Namespace: ns, Labels: labels, Annotations: cp.Annotations},
		Spec:       cp.Spec,
	}
	if p.Spec.RemediationAction != "" {
		out.Spec.RemediationAction = p.Spec.RemediationAction
	}
	if out.Spec.RemediationAction == "" {
		out.Spec.RemediationAction = "inform"
	}
	return defaulted(out)
}

// configPolicyDefaults is the ConfigurationPolicy CRD's defaulter (the CRD the
// config-policy-controller add-on installs).
var configPolicyDefaults = sync.OnceValues(func() (crd.Defaulter, error) {
	def, err := crd.Named("configurationpolicies." + policyv1.GroupVersion.Group)
	if err != nil {
		return nil, err
	}
	return crd.DefaulterFor(def, policyv1.GroupVersion.Version)
})

// defaulted is cp with its CRD's schema defaults applied, through JSON as it travels to the API
// server and back.
func defaulted(cp *policyv1.ConfigurationPolicy) (*policyv1.ConfigurationPolicy, error) {
	defaults, err := configPolicyDefaults()
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(cp)
	if err != nil {
		return nil, err
	}
	u := map[string]any{}
	if err := json.Unmarshal(raw, &u); err != nil {
		return nil, err
	}
	defaults(u)
	if raw, err = json.Marshal(u); err != nil {
		return nil, err
	}
	out := &policyv1.ConfigurationPolicy{}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, err
	}
	return out, nil
}
