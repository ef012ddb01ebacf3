package workstatus

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// FuzzFeedback evaluates arbitrary feedback JSONPaths, as a ManifestWork's author writes them,
// against arbitrary objects, as a spoke's API server returns them. It must never panic, and its
// condition must always be a valid StatusFeedbackSynced condition.
func FuzzFeedback(f *testing.F) {
	deployment := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"n"},` +
		`"status":{"readyReplicas":2,"replicas":3,"conditions":[{"type":"Available","status":"True"}]}}`
	for _, seed := range []struct{ obj, path string }{
		{deployment, ".status.readyReplicas"},
		{deployment, ".readyReplicas"},
		{deployment, `.status.conditions[?(@.type=="Available")].status`},
		{deployment, ".status.conditions[*]"},
		{deployment, ".status"},
		{deployment, "{{"},
		{deployment, ".status.conditions[-1:]"},
		{deployment, ".status..type"},
		{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"` + string(make([]byte, 2000)) + `"}}`, ".data"},
		{`{"apiVersion":"v1","kind":"X","metadata":{"name":"x"},"status":{"a":[[[[1]]]]}}`, ".status.a[0][0][0][0]"},
		{`{"apiVersion":"v1","kind":"X","metadata":{"name":"x"},"status":{"f":1.5e300,"b":true,"n":null}}`, ".status.f"},
	} {
		f.Add([]byte(seed.obj), seed.path)
	}
	f.Fuzz(func(t *testing.T, objJSON []byte, path string) {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(objJSON); err != nil {
			return
		}
		rules := []workv1.FeedbackRule{
			{Type: workv1.JSONPathsType, JSONPaths: []workv1.JSONPath{{Name: "v", Path: path}}},
			{Type: workv1.WellKnownStatusType},
		}
		values, cond := Feedback(obj, rules)
		if cond.Type != workv1.ManifestStatusFeedbackSynced || cond.Reason == "" ||
			(cond.Status != metav1.ConditionTrue && cond.Status != metav1.ConditionFalse) {
			t.Fatalf("Feedback(%q) gave a malformed condition %+v", path, cond)
		}
		for _, v := range values {
			// The API server refuses a value whose type's field is unset (the CRD's rule).
			fv := v.Value
			held := map[workv1.ValueType]bool{workv1.Integer: fv.Integer != nil, workv1.String: fv.String != nil,
				workv1.Boolean: fv.Boolean != nil, workv1.JSONRaw: fv.JSONRaw != nil}
			if !held[fv.Type] {
				t.Fatalf("Feedback(%q) returned value %+v whose type's field is unset", path, fv)
			}
			if fv.JSONRaw != nil && len(*fv.JSONRaw) > MaxJSONRawLength {
				t.Fatalf("Feedback(%q) returned a JsonRaw of %d bytes, above the %d limit", path, len(*fv.JSONRaw), MaxJSONRawLength)
			}
		}
	})
}
