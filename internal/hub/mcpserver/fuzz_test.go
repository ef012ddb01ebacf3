package mcpserver

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FuzzWorkloads feeds workloads, the reader of Kueue Workloads as unstructured objects, with
// whatever JSON the hub might hold: any version of Kueue's API, or none. It must never panic,
// and must describe every object it is given.
func FuzzWorkloads(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload","metadata":{"namespace":"ml","name":"w"},` +
		`"spec":{"queueName":"q","podSets":[{"name":"main","count":4}]},"status":{"clusterName":"east",` +
		`"conditions":[{"type":"Admitted","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}],` +
		`"admissionChecks":[{"name":"mk","state":"Ready"}]}}`))
	f.Add([]byte(`{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"Workload","metadata":{"name":"x"},"spec":{"podSets":[1,"a",{"count":1.5}]},"status":{"conditions":{}}}`))
	f.Add([]byte(`{"apiVersion":"v","kind":"K","status":{"nominatedClusterNames":[1,2],"admission":"x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		u := unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return
		}
		got := workloads([]unstructured.Unstructured{u}, now)
		if len(got) != 1 || got[0].Name != u.GetName() || got[0].AdmissionChecks == nil || got[0].PodSets == nil {
			t.Fatalf("workloads(%s) = %+v: want the object, with non-nil lists", data, got)
		}
	})
}
