package fencing

import (
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Mode is how a kind of workload is stopped.
type Mode int

const (
	// Suspend sets spec.suspend (Jobs, JobSets).
	Suspend Mode = iota
	// Scale sets spec.replicas to zero (Deployments, StatefulSets, ReplicaSets).
	Scale
	// Deactivate sets spec.active to false (Kueue's Workloads): Kueue then evicts the workload
	// and keeps its Job suspended. Suspending a Kueue-managed Job alone does not hold: Kueue
	// starts a suspended Job again while its Workload stays admitted.
	Deactivate
)

// Kind is a kind of workload the agent can stop, and how.
type Kind struct {
	schema.GroupVersionResource
	Mode Mode
	// MultiKueue says that objects of the kind which MultiKueue created are fenced, not only those
	// of fenced works.
	MultiKueue bool
}

// Kinds are the workloads the agent stops, Kueue's Workloads first, so that Kueue stops the Jobs
// it manages rather than start them again when they are suspended.
var Kinds = []Kind{
	{GroupVersionResource: schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}, Mode: Deactivate, MultiKueue: true},
	{GroupVersionResource: schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, Mode: Suspend, MultiKueue: true},
	{GroupVersionResource: schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}, Mode: Suspend, MultiKueue: true},
	{GroupVersionResource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Mode: Scale},
	{GroupVersionResource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, Mode: Scale},
	{GroupVersionResource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, Mode: Scale},
}

// Stopped is what AnnotationStopped records: when and under which epoch the agent stopped the
// object, and the value it changed.
type Stopped struct {
	At    time.Time `json:"at"`
	Epoch int64     `json:"epoch"`
	// Suspend is spec.suspend before (Suspend kinds).
	Suspend *bool `json:"suspend,omitempty"`
	// Replicas is spec.replicas before (Scale kinds).
	Replicas *int64 `json:"replicas,omitempty"`
	// Active is spec.active before (Deactivate kinds).
	Active *bool `json:"active,omitempty"`
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
	recorded := 0
	for _, set := range []bool{s.Suspend != nil, s.Replicas != nil, s.Active != nil} {
		if set {
			recorded++
		}
	}
	if recorded != 1 {
		return Stopped{}, false, fmt.Errorf("%s %s/%s: annotation %s must record exactly one of suspend, replicas and active", obj.GetKind(), obj.GetNamespace(), obj.GetName(), AnnotationStopped)
	}
	return s, true, nil
}

// Finished says whether a Job, JobSet or Workload has ended (a Complete, Failed or Finished
// condition that is True):
// it has nothing left to stop, and its status must reach the hub before anything removes it.
func Finished(obj *unstructured.Unstructured) bool {
	return ConditionTrue(obj, "Complete", "Completed", "Failed", "Finished")
}

// ConditionTrue says whether obj's status has a condition of one of the types that is True.
func ConditionTrue(obj *unstructured.Unstructured, types ...string) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["status"] != "True" {
			continue
		}
		for _, t := range types {
			if m["type"] == t {
				return true
			}
		}
	}
	return false
}

// Stop changes obj in memory so that it runs nothing, and records what it changed. It returns
// false for an object already stopped, a finished one, or one already suspended, inactive or at
// zero replicas by its owner's wish (there is nothing to restore then).
func Stop(obj *unstructured.Unstructured, k Kind, at time.Time, epoch int64) (bool, error) {
	if _, ok, err := StoppedOf(obj); ok || err != nil {
		return false, err
	}
	rec := Stopped{At: at.UTC().Truncate(time.Second), Epoch: epoch}
	if Finished(obj) {
		return false, nil
	}
	switch k.Mode {
	case Suspend, Deactivate:
		field, stopped := "suspend", true
		if k.Mode == Deactivate {
			field, stopped = "active", false
		}
		v, found, _ := unstructured.NestedBool(obj.Object, "spec", field)
		if !found {
			v = !stopped // the APIs' defaults: not suspended, active
		}
		if v == stopped {
			return false, nil
		}
		if k.Mode == Deactivate {
			rec.Active = &v
		} else {
			rec.Suspend = &v
		}
		if err := unstructured.SetNestedField(obj.Object, stopped, "spec", field); err != nil {
			return false, err
		}
	default:
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
	case rec.Active != nil:
		err = unstructured.SetNestedField(obj.Object, *rec.Active, "spec", "active")
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
