package describe

import (
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/hub/workreplicaset"
)

// now is the fake clock's time in every test.
var now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

// cond is a condition that changed d ago.
func cond(typ string, s metav1.ConditionStatus, reason, message string, d time.Duration) metav1.Condition {
	return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: message, LastTransitionTime: ago(d)}
}

type workWrapper struct{ workv1.ManifestWork }

func makeWork(cluster, name string, age time.Duration) *workWrapper {
	return &workWrapper{workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name, CreationTimestamp: ago(age)}}}
}

// manifest adds an object of kind in namespace (empty for a cluster-scoped one) to the workload.
func (w *workWrapper) manifest(apiVersion, kind, namespace, name string) *workWrapper {
	meta := map[string]any{"name": name}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	raw, err := json.Marshal(map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta})
	if err != nil {
		panic(err)
	}
	w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	return w
}

func (w *workWrapper) condition(c metav1.Condition) *workWrapper {
	w.Status.Conditions = append(w.Status.Conditions, c)
	return w
}

// reported adds the agent's status of the manifest at ordinal; its resourceMeta is left for
// the printer to ignore unless the manifest is gone.
func (w *workWrapper) reported(ordinal int32, meta workv1.ManifestResourceMeta, values []workv1.FeedbackValue, conditions ...metav1.Condition) *workWrapper {
	meta.Ordinal = ordinal
	w.Status.ResourceStatus.Manifests = append(w.Status.ResourceStatus.Manifests, workv1.ManifestCondition{
		ResourceMeta:    meta,
		StatusFeedbacks: workv1.StatusFeedbackResult{Values: values},
		Conditions:      conditions,
	})
	return w
}

func (w *workWrapper) fromSet(namespace, name string) *workWrapper {
	w.Labels = map[string]string{workreplicaset.SetLabel: namespace + "." + name}
	return w
}

func (w *workWrapper) deleteOption(d *workv1.DeleteOption) *workWrapper {
	w.Spec.DeleteOption = d
	return w
}

func (w *workWrapper) executor(namespace, name string) *workWrapper {
	w.Spec.Executor = &workv1.ManifestWorkExecutor{Subject: &workv1.ManifestWorkExecutorSubject{
		Type:           workv1.ExecutorSubjectTypeServiceAccount,
		ServiceAccount: &workv1.ManifestWorkSubjectServiceAccount{Namespace: namespace, Name: name},
	}}
	return w
}

// deleting marks the work deleted d ago, held by the agent's finalizer.
func (w *workWrapper) deleting(d time.Duration) *workWrapper {
	t := ago(d)
	w.DeletionTimestamp = &t
	w.Finalizers = []string{"cluster.open-cluster-management.io/manifest-work-cleanup"}
	return w
}

func (w *workWrapper) obj() *workv1.ManifestWork { return &w.ManifestWork }

func integer(name string, v int64) workv1.FeedbackValue {
	return workv1.FeedbackValue{Name: name, Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To(v)}}
}

func str(name, v string) workv1.FeedbackValue {
	return workv1.FeedbackValue{Name: name, Value: workv1.FieldValue{Type: workv1.String, String: ptr.To(v)}}
}

func boolean(name string, v bool) workv1.FeedbackValue {
	return workv1.FeedbackValue{Name: name, Value: workv1.FieldValue{Type: workv1.Boolean, Boolean: ptr.To(v)}}
}

func jsonRaw(name, v string) workv1.FeedbackValue {
	return workv1.FeedbackValue{Name: name, Value: workv1.FieldValue{Type: workv1.JSONRaw, JSONRaw: ptr.To(v)}}
}
