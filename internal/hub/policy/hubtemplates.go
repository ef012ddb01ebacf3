package policy

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/internal/policytemplate"
)

// HubTemplateResync is how often a root policy with hub templates is resolved again without a
// change of its own: what its templates read (ConfigMaps, Secrets, the cluster's labels) is not
// watched.
const HubTemplateResync = time.Minute

// ReasonHubTemplates is the reason of the Warning event on a root whose hub templates failed for
// a cluster (OCM's propagator uses this reason).
const ReasonHubTemplates = "PolicyPropagation"

// hasHubTemplates reports whether root has hub templates to resolve.
func hasHubTemplates(root *policyv1.Policy) bool {
	if off, _ := strconv.ParseBool(root.Annotations[policytemplate.DisableAnnotation]); off {
		return false
	}
	for _, pt := range root.Spec.PolicyTemplates {
		if pt != nil && policytemplate.Has(pt.ObjectDefinition.Raw, policytemplate.Hub) {
			return true
		}
	}
	return false
}

// resolveHubTemplates resolves the hub templates of copy (cluster's copy of root) in place,
// reading only root's namespace and cluster's ManagedCluster, as OCM's propagator does. A
// template that fails keeps its text and gets the error in annotation
// policytemplate.ErrorAnnotation, which the cluster reports as its violation; the root gets a
// Warning event.
func (r *Reconciler) resolveHubTemplates(ctx context.Context, root, copy *policyv1.Policy, cluster string, src policytemplate.Source) {
	mc := &clusterv1.ManagedCluster{}
	_ = r.Client.Get(ctx, client.ObjectKey{Name: cluster}, mc) // a missing cluster has no labels
	opts := policytemplate.Options{
		Delims:    policytemplate.Hub,
		Source:    src,
		Namespace: root.Namespace,
		ClusterScoped: func(apiVersion, kind, name string) bool {
			return apiVersion == clusterv1.GroupVersion.String() && kind == "ManagedCluster" && name == cluster
		},
		Context: map[string]any{
			"ManagedClusterName":   cluster,
			"ManagedClusterLabels": mc.Labels,
			"PolicyMetadata": map[string]any{
				"annotations": root.Annotations, "labels": root.Labels, "name": root.Name, "namespace": root.Namespace,
			},
		},
	}
	for i, pt := range copy.Spec.PolicyTemplates {
		if pt == nil || !policytemplate.Has(pt.ObjectDefinition.Raw, policytemplate.Hub) {
			continue
		}
		resolved, err := policytemplate.Resolve(ctx, pt.ObjectDefinition.Raw, opts)
		if err == nil {
			pt.ObjectDefinition.Raw = resolved
			continue
		}
		r.Recorder.Eventf(root, nil, corev1.EventTypeWarning, ReasonHubTemplates, "Propagate",
			"Failed to resolve templates for cluster %s: spec.policy-templates[%d]: %v", cluster, i, err)
		if marked, merr := markTemplateError(pt.ObjectDefinition.Raw, err); merr == nil {
			pt.ObjectDefinition.Raw = marked
		}
	}
}

// markTemplateError sets policytemplate.ErrorAnnotation on the template object raw.
func markTemplateError(raw []byte, tplErr error) ([]byte, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	a := u.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[policytemplate.ErrorAnnotation] = tplErr.Error()
	u.SetAnnotations(a)
	return u.MarshalJSON()
}

// apiSource reads what hub templates name straight from the API server (the hub caches no
// ConfigMaps or Secrets), each object once per reconcile of a root.
type apiSource struct {
	reader client.Reader

	mu   sync.Mutex
	got  map[string]sourced
	list map[string]listed
}

type sourced struct {
	obj map[string]any
	err error
}

type listed struct {
	items []map[string]any
	err   error
}

func newAPISource(reader client.Reader) *apiSource {
	return &apiSource{reader: reader, got: map[string]sourced{}, list: map[string]listed{}}
}

func (s *apiSource) Get(ctx context.Context, apiVersion, kind, ns, name string) (map[string]any, error) {
	key := fmt.Sprintf("%s/%s/%s/%s", apiVersion, kind, ns, name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.got[key]; ok {
		return g.obj, g.err
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	err := s.reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)
	g := sourced{obj: u.Object, err: err}
	if err != nil {
		g.obj = nil
	}
	s.got[key] = g
	return g.obj, g.err
}

func (s *apiSource) List(ctx context.Context, apiVersion, kind, ns string) ([]map[string]any, error) {
	key := fmt.Sprintf("%s/%s/%s", apiVersion, kind, ns)
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.list[key]; ok {
		return l.items, l.err
	}
	ul := &unstructured.UnstructuredList{}
	ul.SetAPIVersion(apiVersion)
	ul.SetKind(kind + "List")
	var opts []client.ListOption
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	err := s.reader.List(ctx, ul, opts...)
	l := listed{err: err}
	if err == nil {
		for i := range ul.Items {
			l.items = append(l.items, ul.Items[i].Object)
		}
	}
	s.list[key] = l
	return l.items, l.err
}
