package addontemplate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

var agentID = workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Name: "gpu-agent", Namespace: "ns"}

// workWith is the agent's work with an Applied condition (none when status is "") and the
// Deployment's feedback values (name, value pairs).
func workWith(status metav1.ConditionStatus, values ...any) *workv1.ManifestWork {
	w := &workv1.ManifestWork{}
	if status != "" {
		w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkApplied, Status: status, Message: "applied or not"}}
	}
	m := workv1.ManifestCondition{ResourceMeta: workv1.ManifestResourceMeta{Group: "apps", Resource: "deployments", Name: "gpu-agent", Namespace: "ns"}}
	for i := 0; i+1 < len(values); i += 2 {
		n := int64(values[i+1].(int))
		m.StatusFeedbacks.Values = append(m.StatusFeedbacks.Values, workv1.FeedbackValue{Name: values[i].(string),
			Value: workv1.FieldValue{Type: workv1.Integer, Integer: &n}})
	}
	w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{m}
	return w
}

func TestAvailable(t *testing.T) {
	type want struct {
		Status  metav1.ConditionStatus
		Reason  string
		Message string
	}
	cases := map[string]struct {
		work      *workv1.ManifestWork
		workloads []workv1.ResourceIdentifier
		want      want
	}{
		"no work":         {want: want{metav1.ConditionUnknown, ReasonWorkNotFound, "Addon manifestWork is not found"}},
		"not applied yet": {work: workWith(""), workloads: []workv1.ResourceIdentifier{agentID}, want: want{metav1.ConditionUnknown, ReasonWorkNotApplied, "Addon manifestWork is not applied"}},
		"apply failed":    {work: workWith(metav1.ConditionFalse), workloads: []workv1.ResourceIdentifier{agentID}, want: want{metav1.ConditionFalse, ReasonWorkNotApplied, "applied or not"}},
		"no feedback":     {work: workWith(metav1.ConditionTrue), workloads: []workv1.ResourceIdentifier{agentID}, want: want{metav1.ConditionUnknown, ReasonNoProbeResult, "Probe results are not returned"}},
		"none ready": {work: workWith(metav1.ConditionTrue, "Replicas", 2), workloads: []workv1.ResourceIdentifier{agentID},
			want: want{metav1.ConditionFalse, ReasonProbeUnavailable, "Probe addon unavailable with err ReadyReplicas is not probed for deployments ns/gpu-agent"}},
		"zero ready": {work: workWith(metav1.ConditionTrue, "Replicas", 2, "ReadyReplicas", 0), workloads: []workv1.ResourceIdentifier{agentID},
			want: want{metav1.ConditionFalse, ReasonProbeUnavailable, "Probe addon unavailable with err Replicas is 2 but ReadyReplicas is 0 for deployments ns/gpu-agent"}},
		"one ready": {work: workWith(metav1.ConditionTrue, "Replicas", 2, "ReadyReplicas", 1), workloads: []workv1.ResourceIdentifier{agentID},
			want: want{metav1.ConditionTrue, ReasonProbeAvailable, "gpu add-on is available."}},
		"scaled to zero": {work: workWith(metav1.ConditionTrue, "Replicas", 0), workloads: []workv1.ResourceIdentifier{agentID},
			want: want{metav1.ConditionTrue, ReasonProbeAvailable, "gpu add-on is available."}},
		"no workloads": {work: workWith(metav1.ConditionTrue), want: want{metav1.ConditionTrue, ReasonProbeAvailable, "gpu add-on is available."}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := available("gpu", tc.work, tc.workloads)
			if diff := cmp.Diff(tc.want, want{c.Status, c.Reason, c.Message}); diff != "" {
				t.Errorf("Available (-want +got):\n%s", diff)
			}
		})
	}
}

func TestManifestApplied(t *testing.T) {
	cases := map[string]struct {
		work *workv1.ManifestWork
		want *metav1.Condition
	}{
		"no work":      {},
		"not reported": {work: workWith("")},
		"applied": {work: workWith(metav1.ConditionTrue), want: &metav1.Condition{Type: "ManifestApplied", Status: metav1.ConditionTrue,
			Reason: ReasonManifestsApplied, Message: "manifests of addon are applied successfully"}},
		"failed": {work: workWith(metav1.ConditionFalse), want: &metav1.Condition{Type: "ManifestApplied", Status: metav1.ConditionFalse,
			Reason: ReasonManifestsApplyFailed, Message: "failed to apply the manifests of addon: applied or not"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, manifestApplied(tc.work)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
