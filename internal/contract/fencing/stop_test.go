package fencing

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func job(spec, status map[string]any) *unstructured.Unstructured {
	o := map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "train", "namespace": "ml"}}
	if spec != nil {
		o["spec"] = spec
	}
	if status != nil {
		o["status"] = status
	}
	return &unstructured.Unstructured{Object: o}
}

func workload(spec, status map[string]any) *unstructured.Unstructured {
	u := job(spec, status)
	u.SetAPIVersion("kueue.x-k8s.io/v1beta2")
	u.SetKind("Workload")
	return u
}

func kind(t *testing.T, resource string) Kind {
	t.Helper()
	for _, k := range Kinds {
		if k.Resource == resource {
			return k
		}
	}
	t.Fatalf("no kind %s", resource)
	return Kind{}
}

func deployment(spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "serve", "namespace": "ml"}, "spec": spec}}
}

func TestStopResume(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	suspendKind, scaleKind, deactivateKind := kind(t, "jobs"), kind(t, "deployments"), kind(t, "workloads")
	complete := map[string]any{"conditions": []any{map[string]any{"type": "Complete", "status": "True"}}}
	tests := map[string]struct {
		obj         *unstructured.Unstructured
		kind        Kind
		wantStopped bool
		wantSpec    map[string]any // after Stop
		wantRecord  string
	}{
		"running job":            {obj: job(map[string]any{"parallelism": int64(2)}, nil), kind: suspendKind, wantStopped: true, wantSpec: map[string]any{"parallelism": int64(2), "suspend": true}, wantRecord: `{"at":"2026-12-02T10:00:00Z","epoch":4,"suspend":false}`},
		"job already suspended":  {obj: job(map[string]any{"suspend": true}, nil), kind: suspendKind, wantSpec: map[string]any{"suspend": true}},
		"finished job":           {obj: job(map[string]any{}, complete), kind: suspendKind, wantSpec: map[string]any{}},
		"deployment":             {obj: deployment(map[string]any{"replicas": int64(3)}), kind: scaleKind, wantStopped: true, wantSpec: map[string]any{"replicas": int64(0)}, wantRecord: `{"at":"2026-12-02T10:00:00Z","epoch":4,"replicas":3}`},
		"deployment default one": {obj: deployment(map[string]any{}), kind: scaleKind, wantStopped: true, wantSpec: map[string]any{"replicas": int64(0)}, wantRecord: `{"at":"2026-12-02T10:00:00Z","epoch":4,"replicas":1}`},
		"deployment at zero":     {obj: deployment(map[string]any{"replicas": int64(0)}), kind: scaleKind, wantSpec: map[string]any{"replicas": int64(0)}},
		"admitted workload":      {obj: workload(map[string]any{"queueName": "q"}, nil), kind: deactivateKind, wantStopped: true, wantSpec: map[string]any{"queueName": "q", "active": false}, wantRecord: `{"at":"2026-12-02T10:00:00Z","epoch":4,"active":true}`},
		"inactive workload":      {obj: workload(map[string]any{"active": false}, nil), kind: deactivateKind, wantSpec: map[string]any{"active": false}},
		"finished workload":      {obj: workload(map[string]any{}, map[string]any{"conditions": []any{map[string]any{"type": "Finished", "status": "True"}}}), kind: deactivateKind, wantSpec: map[string]any{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := tc.obj.DeepCopy()
			stopped, err := Stop(tc.obj, tc.kind, at, 4)
			if err != nil {
				t.Fatal(err)
			}
			if stopped != tc.wantStopped {
				t.Fatalf("Stop = %v, want %v", stopped, tc.wantStopped)
			}
			if diff := cmp.Diff(tc.wantSpec, tc.obj.Object["spec"]); diff != "" {
				t.Errorf("spec after Stop (-want +got):\n%s", diff)
			}
			if got := tc.obj.GetAnnotations()[AnnotationStopped]; got != tc.wantRecord {
				t.Errorf("record = %q, want %q", got, tc.wantRecord)
			}
			again, err := Stop(tc.obj, tc.kind, at.Add(time.Minute), 5)
			if err != nil || again {
				t.Errorf("second Stop = %v, %v; want false, nil", again, err)
			}
			resumed, err := Resume(tc.obj)
			if err != nil || resumed != tc.wantStopped {
				t.Fatalf("Resume = %v, %v; want %v", resumed, err, tc.wantStopped)
			}
			if !tc.wantStopped {
				return
			}
			// A stopped object gets its value back, explicitly, and loses the record.
			field := map[Mode]string{Suspend: "suspend", Scale: "replicas", Deactivate: "active"}[tc.kind.Mode]
			want, found, _ := unstructured.NestedFieldNoCopy(before.Object, "spec", field)
			if !found {
				want = map[string]any{"suspend": false, "replicas": int64(1), "active": true}[field]
			}
			got, _, _ := unstructured.NestedFieldNoCopy(tc.obj.Object, "spec", field)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("spec.%s after Resume (-want +got):\n%s", field, diff)
			}
			if _, ok, _ := StoppedOf(tc.obj); ok {
				t.Errorf("Resume left the record")
			}
		})
	}
}

func TestStoppedOfRefusesBadRecords(t *testing.T) {
	for name, rec := range map[string]string{
		"not json":  "yes",
		"neither":   `{"at":"2026-12-02T10:00:00Z","epoch":1}`,
		"both":      `{"at":"2026-12-02T10:00:00Z","epoch":1,"suspend":false,"replicas":2}`,
		"all three": `{"at":"2026-12-02T10:00:00Z","epoch":1,"suspend":false,"replicas":2,"active":true}`,
	} {
		obj := job(nil, nil)
		obj.SetAnnotations(map[string]string{AnnotationStopped: rec})
		if _, ok, err := StoppedOf(obj); err == nil || ok {
			t.Errorf("%s: StoppedOf = ok %v, err %v; want an error", name, ok, err)
		}
		if resumed, err := Resume(obj); err == nil || resumed {
			t.Errorf("%s: Resume = %v, %v; want an error", name, resumed, err)
		}
	}
}
