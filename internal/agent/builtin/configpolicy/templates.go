package configpolicy

import (
	"context"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/internal/policytemplate"
)

// reasonHubTemplates is the reason of a policy whose hub templates the hub could not resolve
// (OCM's).
const reasonHubTemplates = "Error processing hub templates"

// noHubMessage is the message when the hub left a hub template and no error (OCM's words).
const noHubMessage = "Error occurred while processing hub-templates, check the policy events for more details."

// objectTemplates is cp's object templates with its cluster templates resolved on this cluster
// (spec.object-templates-raw read into templates when it is the policy's form), or the reason and
// message of why the policy cannot be evaluated: hub templates the hub left unresolved, a cluster
// template that fails. Like OCM's controller, one failing template fails the whole policy.
func (e *engine) objectTemplates(ctx context.Context, cp *policyv1.ConfigurationPolicy) ([]*policyv1.ObjectTemplate, string, string) {
	disabled, _ := strconv.ParseBool(cp.Annotations[policytemplate.DisableAnnotation])
	opts := policytemplate.Options{Delims: policytemplate.Cluster, Source: e.source()}
	ots := cp.Spec.ObjectTemplates
	if len(ots) == 0 && cp.Spec.ObjectTemplatesRaw != "" {
		raw := cp.Spec.ObjectTemplatesRaw
		if hub := cp.Annotations[policytemplate.ErrorAnnotation]; hub != "" || policytemplate.Has([]byte(raw), policytemplate.Hub) {
			return nil, reasonHubTemplates, orDefault(hub, noHubMessage)
		}
		if !disabled && policytemplate.Has([]byte(raw), policytemplate.Cluster) {
			var err error
			if raw, err = policytemplate.ResolveText(ctx, raw, opts); err != nil {
				return nil, reasonError, fmt.Sprintf("spec.object-templates-raw: %v", err)
			}
		}
		if err := yaml.Unmarshal([]byte(raw), &ots); err != nil {
			return nil, reasonError, fmt.Sprintf("spec.object-templates-raw is not a list of object templates: %v", err)
		}
		return ots, "", ""
	}
	out := make([]*policyv1.ObjectTemplate, len(ots))
	for i, ot := range ots {
		out[i] = ot
		if ot == nil {
			continue
		}
		raw := ot.ObjectDefinition.Raw
		if policytemplate.Has(raw, policytemplate.Hub) {
			return nil, reasonHubTemplates, orDefault(cp.Annotations[policytemplate.ErrorAnnotation], noHubMessage)
		}
		if disabled || !policytemplate.Has(raw, policytemplate.Cluster) {
			continue
		}
		resolved, err := policytemplate.Resolve(ctx, raw, opts)
		if err != nil {
			return nil, reasonError, fmt.Sprintf("spec.object-templates[%d].objectDefinition: %v", i, err)
		}
		next := ot.DeepCopy()
		next.ObjectDefinition.Raw = resolved
		out[i] = next
	}
	return out, "", ""
}

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// source reads what cluster templates name, as the engine reads what policies check (the
// executor, when one is set).
func (e *engine) source() policytemplate.Source { return dynamicSource{dyn: e.dyn, mapper: e.mapper} }

type dynamicSource struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

func (s dynamicSource) resource(apiVersion, kind, ns string) (dynamic.ResourceInterface, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	m, err := s.mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	if err != nil {
		return nil, fmt.Errorf("the cluster does not serve %s of %s: %w", kind, apiVersion, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return s.dyn.Resource(m.Resource).Namespace(ns), nil
	}
	return s.dyn.Resource(m.Resource), nil
}

func (s dynamicSource) Get(ctx context.Context, apiVersion, kind, ns, name string) (map[string]any, error) {
	r, err := s.resource(apiVersion, kind, ns)
	if err != nil {
		return nil, err
	}
	o, err := r.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return o.Object, nil
}

func (s dynamicSource) List(ctx context.Context, apiVersion, kind, ns string) ([]map[string]any, error) {
	r, err := s.resource(apiVersion, kind, ns)
	if err != nil {
		return nil, err
	}
	l, err := r.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(l.Items))
	for i := range l.Items {
		out[i] = l.Items[i].Object
	}
	return out, nil
}
