package fencing

import (
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kind is a kind of workload the agent can stop, and how.
type Kind struct {
	schema.GroupVersionResource
	// Suspend kinds are stopped with spec.suspend; the others are scaled to zero replicas.
	Suspend bool
}

// Kinds are the workloads the agent stops: Jobs and JobSets are suspended (their pods are
// deleted and the Job keeps its progress), Deployments, StatefulSets and ReplicaSets are scaled
// to zero.
var Kinds = []Kind{
	{GroupVersionResource: schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, Suspend: true},
	{GroupVersionResource: schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}, Suspend: true},
	{GroupVersionResource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}},
	{GroupVersionResource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}},
	{GroupVersionResource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}},
}

// Stopped is what AnnotationStopped records: when and under which epoch the agent stopped the
// object, and the value it changed.
type Stopped struct {
	At    time.Time `json:"at"`
	Epoch int64     `json:"epoch"`
	// Suspend is spec.suspend before (suspend kinds).
	Suspend *bool `json:"suspend,omitempty"`
	// Replicas is spec.replicas before (scaled kinds).
	Replicas *int64 `json:"replicas,omitempty"`
}

// StoppedOf reads obj's AnnotationStopped; ok is false when it has none.
func StoppedOf(obj *unstructured.Unstructured) (s Stopped, ok bool, err error) {
	v, found := obj.GetAnnotations()[AnnotationStopped]
	if !found {
		return Stopped{}, false, nil
	}
	if err := json.Unmarshal([]byte(v), &s); err != nil {
		return Stopped{}, false, fmt.Errorf("%s %s/%s: annotation %s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), AnnotationStopped, err)
	}
	if (s.Suspend == nil) == (s.Replicas == nil) {
		return Stopped{}, false, fmt.Errorf("%s %s/%s: annotation %s must record exactly one of suspend and replicas", obj.GetKind(), obj.GetNamespace(), obj.GetName(), AnnotationStopped)
	}
	return s, true, nil
}

// Finished says whether a Job or JobSet has ended (a Complete or Failed condition that is True):
// it has nothing left to stop, and its status must reach the hub before anything removes it.
func Finished(obj *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		switch m["type"] {
		case "Complete", "Completed", "Failed":
			if m["status"] == "True" {
				return true
			}
		}
	}
	return false
}

// Stop changes obj in memory so that it runs nothing, and records what it changed. It returns
// false for an object already stopped, a finished Job or JobSet, or one already suspended or at
// zero replicas by its owner's wish (there is nothing to restore then).
func Stop(obj *unstructured.Unstructured, k Kind, at time.Time, epoch int64) (bool, error) {
	if _, ok, err := StoppedOf(obj); ok || err != nil {
		return false, err
	}
	rec := Stopped{At: at.UTC().Truncate(time.Second), Epoch: epoch}
	if k.Suspend {
		if Finished(obj) {
			return false, nil
		}
		suspended, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend")
		if suspended {
			return false, nil
		}
		rec.Suspend = &suspended
		if err := unstructured.SetNestedField(obj.Object, true, "spec", "suspend"); err != nil {
			return false, err
		}
	} else {
		replicas, found, err := unstructured.NestedInt64(obj.Object, "spec", "replicas")
		if err != nil {
			return false, err
		}
		if !found {
			replicas = 1 // the API's default
		}
		if replicas == 0 {
			return false, nil
		}
		rec.Replicas = &replicas
		if err := unstructured.SetNestedField(obj.Object, int64(0), "spec", "replicas"); err != nil {
			return false, err
		}
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return false, err
	}
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationStopped] = string(data)
	obj.SetAnnotations(ann)
	return true, nil
}

// Resume undoes Stop in memory: the recorded value back, the record removed. It returns false
// for an object the agent did not stop.
func Resume(obj *unstructured.Unstructured) (bool, error) {
	rec, ok, err := StoppedOf(obj)
	if !ok || err != nil {
		return false, err
	}
	switch {
	case rec.Suspend != nil:
		err = unstructured.SetNestedField(obj.Object, *rec.Suspend, "spec", "suspend")
	default:
		err = unstructured.SetNestedField(obj.Object, *rec.Replicas, "spec", "replicas")
	}
	if err != nil {
		return false, err
	}
	ann := obj.GetAnnotations()
	delete(ann, AnnotationStopped)
	obj.SetAnnotations(ann)
	return true, nil
}
