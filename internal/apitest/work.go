package apitest

import (
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// WorkWrapper builds a ManifestWork.
type WorkWrapper struct{ workv1.ManifestWork }

// MakeWork is an empty ManifestWork in namespace (its cluster's), with no status.
func MakeWork(namespace, name string) *WorkWrapper {
	return &WorkWrapper{workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}}
}

// Obj is a deep copy of the work built so far.
func (w *WorkWrapper) Obj() *workv1.ManifestWork { return w.DeepCopy() }

// Created sets the work's creation time.
func (w *WorkWrapper) Created(at time.Time) *WorkWrapper {
	w.CreationTimestamp = metav1.NewTime(at)
	return w
}

// Label sets label key to value.
func (w *WorkWrapper) Label(key, value string) *WorkWrapper {
	setLabel(&w.ObjectMeta, key, value)
	return w
}

// Finalizer adds finalizer f.
func (w *WorkWrapper) Finalizer(f string) *WorkWrapper {
	w.Finalizers = append(w.Finalizers, f)
	return w
}

// Deleting sets the deletion time to at; an API server (and the fake client) keeps a deleted
// object only while it has a Finalizer.
func (w *WorkWrapper) Deleting(at time.Time) *WorkWrapper {
	deleting(&w.ObjectMeta, at)
	return w
}

// Manifest adds raw (JSON, valid or not) to the workload.
func (w *WorkWrapper) Manifest(raw string) *WorkWrapper {
	w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(raw)}})
	return w
}

// Object adds to the workload an object of kind with only its name and namespace (empty for a
// cluster-scoped one).
func (w *WorkWrapper) Object(apiVersion, kind, namespace, name string) *WorkWrapper {
	meta := map[string]any{"name": name}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	raw, err := json.Marshal(map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta})
	if err != nil {
		panic(err)
	}
	return w.Manifest(string(raw))
}

// Config adds a manifest config for the object of resource in group named namespace/name.
func (w *WorkWrapper) Config(group, resource, namespace, name string) *WorkWrapper {
	w.Spec.ManifestConfigs = append(w.Spec.ManifestConfigs, workv1.ManifestConfigOption{
		ResourceIdentifier: workv1.ResourceIdentifier{Group: group, Resource: resource, Namespace: namespace, Name: name},
	})
	return w
}

// Executor makes the agent apply the workload as service account namespace/name.
func (w *WorkWrapper) Executor(namespace, name string) *WorkWrapper {
	w.Spec.Executor = &workv1.ManifestWorkExecutor{Subject: &workv1.ManifestWorkExecutorSubject{
		Type:           workv1.ExecutorSubjectTypeServiceAccount,
		ServiceAccount: &workv1.ManifestWorkSubjectServiceAccount{Namespace: namespace, Name: name},
	}}
	return w
}

// DeleteOption sets spec.deleteOption.
func (w *WorkWrapper) DeleteOption(d *workv1.DeleteOption) *WorkWrapper {
	w.Spec.DeleteOption = d
	return w
}

// Condition adds status conditions as they are.
func (w *WorkWrapper) Condition(c ...metav1.Condition) *WorkWrapper {
	w.Status.Conditions = append(w.Status.Conditions, c...)
	return w
}

// ManifestStatus adds the agent's status of the manifest at ordinal: its resource meta, status
// feedback values and conditions.
func (w *WorkWrapper) ManifestStatus(ordinal int32, meta workv1.ManifestResourceMeta, values []workv1.FeedbackValue, conditions ...metav1.Condition) *WorkWrapper {
	meta.Ordinal = ordinal
	w.Status.ResourceStatus.Manifests = append(w.Status.ResourceStatus.Manifests, workv1.ManifestCondition{
		ResourceMeta:    meta,
		StatusFeedbacks: workv1.StatusFeedbackResult{Values: values},
		Conditions:      conditions,
	})
	return w
}
