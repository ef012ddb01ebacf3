package fencing

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FuzzParseTiming: the annotation is the hub's, but an administrator may edit it; parsing never
// panics, and what parses is valid and prints back to itself.
func FuzzParseTiming(f *testing.F) {
	f.Add(Default.String())
	f.Add("lease=1s fence=1s lost=7s")
	f.Add("lease=5s fence=20s lost=29s")
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := ParseTiming(s)
		if err != nil {
			return
		}
		if err := tm.Validate(); err != nil {
			t.Fatalf("ParseTiming(%q) accepted an invalid timing: %v", s, err)
		}
		back, err := ParseTiming(tm.String())
		if err != nil || back != tm {
			t.Fatalf("ParseTiming(%q).String() = %q does not parse back: %v", s, tm.String(), err)
		}
	})
}

// FuzzStoppedRecord: the record lives on a spoke object that the spoke's users may edit.
func FuzzStoppedRecord(f *testing.F) {
	f.Add(`{"at":"2026-12-02T10:00:00Z","epoch":4,"suspend":false}`)
	f.Add(`{"at":"2026-12-02T10:00:00Z","epoch":4,"replicas":3}`)
	f.Fuzz(func(t *testing.T, rec string) {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "d", "namespace": "n", "annotations": map[string]any{AnnotationStopped: rec}}}}
		if _, err := Resume(obj); err != nil {
			return
		}
		if _, still := obj.GetAnnotations()[AnnotationStopped]; still {
			t.Fatalf("Resume left the record %q", rec)
		}
	})
}

// FuzzRequeuedOf: the record is the hub's, but an administrator may edit it; reading never panics,
// and what reads is within its bounds and prints back to itself.
func FuzzRequeuedOf(f *testing.F) {
	f.Add(WithRequeued(Requeued{}, 3, []string{"team/a", "team/b"}).String())
	f.Add(`{"epoch":-1,"workloads":[]}`)
	f.Add(`{"epoch":1,"workloads":null,"more":2}`)
	f.Fuzz(func(t *testing.T, s string) {
		r, ok, err := RequeuedOf(map[string]string{AnnotationRequeued: s})
		if err != nil || !ok {
			return
		}
		if r.Epoch < 0 || r.More < 0 || len(r.Workloads) > MaxRequeuedNames {
			t.Fatalf("RequeuedOf(%q) = %+v: out of bounds", s, r)
		}
		back, ok, err := RequeuedOf(map[string]string{AnnotationRequeued: r.String()})
		if err != nil || !ok || back.String() != r.String() {
			t.Fatalf("RequeuedOf(%q).String() = %q does not read back: %v", s, r.String(), err)
		}
	})
}
