package describe

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/apitest"
)

// now is the fake clock's time in every test.
var now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

// cond is a condition that changed d ago.
func cond(typ string, s metav1.ConditionStatus, reason, message string, d time.Duration) metav1.Condition {
	return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: message, LastTransitionTime: ago(d)}
}

// makeWork is an empty ManifestWork for cluster (its namespace), created age ago.
func makeWork(cluster, name string, age time.Duration) *apitest.WorkWrapper {
	return apitest.MakeWork(cluster, name).Created(now.Add(-age))
}

// makeFL is a FederatedLearning of framework with images registry.example/<name>/server:1 and
// client:1, created age ago; it has no status.
func makeFL(namespace, name string, framework flv1alpha1.Framework, age time.Duration) *apitest.FederatedLearningWrapper {
	return apitest.MakeFederatedLearning(namespace, name).Created(now.Add(-age)).Framework(framework).
		ServerImage("registry.example/" + name + "/server:1").ClientImage("registry.example/" + name + "/client:1")
}

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
