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
// ConfigMaps or Secrets), each object once per reconcile of a root; the copies' writers read
// side by side, waiting only for a read of the same object.
type apiSource struct {
	reader client.Reader
	got    memo[map[string]any]
	list   memo[[]map[string]any]
}

func newAPISource(reader client.Reader) *apiSource { return &apiSource{reader: reader} }

func (s *apiSource) Get(ctx context.Context, apiVersion, kind, ns, name string) (map[string]any, error) {
	return s.got.do(fmt.Sprintf("%s/%s/%s/%s", apiVersion, kind, ns, name), func() (map[string]any, error) {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		if err := s.reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
			return nil, err
		}
		return u.Object, nil
	})
}

func (s *apiSource) List(ctx context.Context, apiVersion, kind, ns string) ([]map[string]any, error) {
	return s.list.do(fmt.Sprintf("%s/%s/%s", apiVersion, kind, ns), func() ([]map[string]any, error) {
		ul := &unstructured.UnstructuredList{}
		ul.SetAPIVersion(apiVersion)
		ul.SetKind(kind + "List")
		var opts []client.ListOption
		if ns != "" {
			opts = append(opts, client.InNamespace(ns))
		}
		if err := s.reader.List(ctx, ul, opts...); err != nil {
			return nil, err
		}
		items := make([]map[string]any, len(ul.Items))
		for i := range ul.Items {
			items[i] = ul.Items[i].Object
		}
		return items, nil
	})
}

// memo computes a value once per key; the lock is held only to find the key's entry.
type memo[T any] struct {
	mu sync.Mutex
	m  map[string]*memoEntry[T]
}

type memoEntry[T any] struct {
	once sync.Once
	v    T
	err  error
}

func (m *memo[T]) do(key string, f func() (T, error)) (T, error) {
	m.mu.Lock()
	if m.m == nil {
		m.m = map[string]*memoEntry[T]{}
	}
	e := m.m[key]
	if e == nil {
		e = &memoEntry[T]{}
		m.m[key] = e
	}
	m.mu.Unlock()
	e.once.Do(func() { e.v, e.err = f() })
	return e.v, e.err
}
