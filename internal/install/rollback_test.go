package install

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestRestorable(t *testing.T) {
	live := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"name": "flotilla-hub", "namespace": "flotilla-system", "uid": "u-1", "resourceVersion": "42",
			"generation": int64(3), "creationTimestamp": "2026-12-07T00:00:00Z",
			"managedFields":   []any{map[string]any{"manager": "flotilla"}},
			"labels":          map[string]any{PartOfLabel: PartOf},
			"annotations":     map[string]any{"deployment.kubernetes.io/revision": "3", "note": "kept"},
			"ownerReferences": []any{map[string]any{"kind": "X", "name": "owner"}},
		},
		"spec":   map[string]any{"replicas": int64(2)},
		"status": map[string]any{"readyReplicas": int64(2)},
	}}
	want := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"name": "flotilla-hub", "namespace": "flotilla-system",
			"labels":          map[string]any{PartOfLabel: PartOf},
			"annotations":     map[string]any{"note": "kept"},
			"ownerReferences": []any{map[string]any{"kind": "X", "name": "owner"}},
		},
		"spec": map[string]any{"replicas": int64(2)},
	}
	if diff := cmp.Diff(want, restorable(live).Object); diff != "" {
		t.Errorf("restorable (-want +got):\n%s", diff)
	}
	if live.Object["status"] == nil || live.GetResourceVersion() != "42" {
		t.Error("restorable changed the object it was given")
	}

	// A cluster-scoped object without labels or annotations gets neither.
	bare := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "x", "uid": "u"},
	}}
	if diff := cmp.Diff(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "x"}},
		restorable(bare).Object); diff != "" {
		t.Errorf("restorable of a bare object (-want +got):\n%s", diff)
	}
}

func TestSnapshotPlan(t *testing.T) {
	cm := objectRef{"v1", "ConfigMap", "ns", "kept"}
	added := objectRef{"v1", "Secret", "ns", "added"}
	live := cm.object("other")
	live.SetResourceVersion("7")
	s := &snapshot{refs: []objectRef{cm, added}, before: map[objectRef]*unstructured.Unstructured{cm: live}}
	reapply, remove := s.plan("rel")
	names := func(objs []*unstructured.Unstructured) []string {
		var out []string
		for _, o := range objs {
			out = append(out, o.GetKind()+" "+o.GetName()+" "+o.GetLabels()[InstanceLabel]+" rv="+o.GetResourceVersion())
		}
		return out
	}
	// What existed is applied again with its own labels; what the install added is removed only
	// if it carries this release's.
	if diff := cmp.Diff([]string{"ConfigMap kept other rv="}, names(reapply)); diff != "" {
		t.Errorf("reapply (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Secret added rel rv="}, names(remove)); diff != "" {
		t.Errorf("remove (-want +got):\n%s", diff)
	}
}
