package workstatus

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

func intValue(name string, v int64) workv1.FeedbackValue {
	return workv1.FeedbackValue{Name: name, Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr(v)}}
}

func strValue(name, v string) workv1.FeedbackValue {
	return workv1.FeedbackValue{Name: name, Value: workv1.FieldValue{Type: workv1.String, String: ptr(v)}}
}

func rawValue(name, v string) workv1.FeedbackValue {
	return workv1.FeedbackValue{Name: name, Value: workv1.FieldValue{Type: workv1.JSONRaw, JSONRaw: ptr(v)}}
}

func TestFeedback(t *testing.T) {
	wellKnown := []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}}
	paths := func(ps ...workv1.JSONPath) []workv1.FeedbackRule {
		return []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JSONPaths: ps}}
	}
	cases := map[string]struct {
		obj         string
		rules       []workv1.FeedbackRule
		wantValues  []workv1.FeedbackValue
		wantStatus  metav1.ConditionStatus
		wantReason  string
		wantMessage []string // substrings of the condition's message
	}{
		"no rules": {
			obj: deploymentJSON, wantStatus: metav1.ConditionTrue, wantReason: ReasonNoStatusFeedback,
		},
		"deployment well-known (OCM's names, then updatedReplicas)": {
			obj: deploymentJSON, rules: wellKnown,
			wantValues: []workv1.FeedbackValue{intValue("ReadyReplicas", 2), intValue("Replicas", 3), intValue("AvailableReplicas", 2), intValue("UpdatedReplicas", 3)},
			wantStatus: metav1.ConditionTrue, wantReason: ReasonStatusFeedbackOK,
		},
		"finished job well-known": {
			obj: jobDoneJSON, rules: wellKnown,
			wantValues: []workv1.FeedbackValue{strValue("JobComplete", "True"), intValue("JobSucceeded", 4)},
			wantStatus: metav1.ConditionTrue, wantReason: ReasonStatusFeedbackOK,
		},
		"failed job well-known": {
			obj: jobFailedJSON, rules: wellKnown,
			wantValues: []workv1.FeedbackValue{intValue("JobFailed", 6)},
			wantStatus: metav1.ConditionTrue, wantReason: ReasonStatusFeedbackOK,
		},
		"running job well-known reports only what exists": {
			obj: jobRunningJSON, rules: wellKnown,
			wantValues: []workv1.FeedbackValue{intValue("JobActive", 2)},
			wantStatus: metav1.ConditionTrue, wantReason: ReasonStatusFeedbackOK,
		},
		"pod well-known": {
			obj: podJSON, rules: wellKnown,
			wantValues: []workv1.FeedbackValue{strValue("PodReady", "False"), strValue("PodPhase", "Succeeded")},
			wantStatus: metav1.ConditionTrue, wantReason: ReasonStatusFeedbackOK,
		},
		"statefulset well-known": {
			obj: statefulSetJSON, rules: wellKnown,
			wantValues: []workv1.FeedbackValue{intValue("ReadyReplicas", 3), intValue("Replicas", 3), intValue("AvailableReplicas", 3), intValue("UpdatedReplicas", 3), intValue("CurrentReplicas", 3)},
			wantStatus: metav1.ConditionTrue, wantReason: ReasonStatusFeedbackOK,
		},
		"daemonset well-known": {
			obj: daemonSetJSON, rules: wellKnown,
			wantValues: []workv1.FeedbackValue{intValue("DesiredNumberScheduled", 5), intValue("CurrentNumberScheduled", 5), intValue("NumberReady", 4), intValue("NumberAvailable", 4), intValue("UpdatedNumberScheduled", 5)},
			wantStatus: metav1.ConditionTrue, wantReason: ReasonStatusFeedbackOK,
		},
		"well-known of a kind without values fails naming the kind and the fix": {
			obj: configMapJSON, rules: wellKnown,
			wantStatus: metav1.ConditionFalse, wantReason: ReasonStatusFeedbackFail,
			wantMessage: []string{"ConfigMap apps/cfg", "feedbackRules[0]", "v1 ConfigMap", "use type JSONPaths"},
		},
		"JSONPaths from the object's top, as OCM": {
			obj: deploymentJSON,
			rules: paths(workv1.JSONPath{Name: "isAvailable", Path: `.status.conditions[?(@.type=="Available")].status`},
				workv1.JSONPath{Name: "wanted", Path: ".spec.replicas"}),
			wantValues: []workv1.FeedbackValue{strValue("isAvailable", "True"), intValue("wanted", 3)},
			wantStatus: metav1.ConditionTrue, wantReason: ReasonStatusFeedbackOK,
		},
		"JSONPaths relative to status": {
			obj:        jobDoneJSON,
			rules:      paths(workv1.JSONPath{Name: "succeeded", Path: ".succeeded"}),
			wantValues: []workv1.FeedbackValue{intValue("succeeded", 4)},
			wantStatus: metav1.ConditionTrue, wantReason: ReasonStatusFeedbackOK,
		},
		"JSONPaths boolean": {
			obj:        `{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"status":{"ready":true}}`,
			rules:      paths(workv1.JSONPath{Name: "ready", Path: ".status.ready"}),
			wantValues: []workv1.FeedbackValue{{Name: "ready", Value: workv1.FieldValue{Type: workv1.Boolean, Boolean: ptr(true)}}},
			wantStatus: metav1.ConditionTrue, wantReason: ReasonStatusFeedbackOK,
		},
		"JSONPaths list and object are JsonRaw": {
			obj: deploymentJSON,
			rules: paths(workv1.JSONPath{Name: "types", Path: `.status.conditions[?(@.status=="True")].type`},
				workv1.JSONPath{Name: "first", Path: ".status.conditions[0]"}),
			wantValues: []workv1.FeedbackValue{rawValue("types", `["Available","Progressing"]`), rawValue("first", `{"status":"True","type":"Available"}`)},
			wantStatus: metav1.ConditionTrue, wantReason: ReasonStatusFeedbackOK,
		},
		"JSONPaths missing field reports nothing and is not a failure": {
			obj:        deploymentJSON,
			rules:      paths(workv1.JSONPath{Name: "gone", Path: ".status.nothing"}),
			wantStatus: metav1.ConditionTrue, wantReason: ReasonStatusFeedbackOK,
		},
		"JSONPaths version mismatch fails that path only": {
			obj: deploymentJSON,
			rules: paths(workv1.JSONPath{Name: "old", Version: "v1beta1", Path: ".status.replicas"},
				workv1.JSONPath{Name: "replicas", Path: ".status.replicas"}),
			wantValues: []workv1.FeedbackValue{intValue("replicas", 3)},
			wantStatus: metav1.ConditionFalse, wantReason: ReasonStatusFeedbackFail,
			wantMessage: []string{"old (path .status.replicas)", "version v1beta1", "set version to v1"},
		},
		"JSONPaths matching version": {
			obj:        deploymentJSON,
			rules:      paths(workv1.JSONPath{Name: "replicas", Version: "v1", Path: ".status.replicas"}),
			wantValues: []workv1.FeedbackValue{intValue("replicas", 3)},
			wantStatus: metav1.ConditionTrue, wantReason: ReasonStatusFeedbackOK,
		},
		"JSONPaths parse error names the path": {
			obj:        deploymentJSON,
			rules:      paths(workv1.JSONPath{Name: "bad", Path: ".status.conditions[?(@.type=="}),
			wantStatus: metav1.ConditionFalse, wantReason: ReasonStatusFeedbackFail,
			wantMessage: []string{"bad (path .status.conditions[?(@.type==)", "not a valid JSONPath"},
		},
		"JSONPaths too large a value": {
			obj:        `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"k":"` + strings.Repeat("x", 2000) + `"}}`,
			rules:      paths(workv1.JSONPath{Name: "data", Path: ".data"}),
			wantStatus: metav1.ConditionFalse, wantReason: ReasonStatusFeedbackFail,
			wantMessage: []string{"data (path .data)", "more than the 1024"},
		},
		"several rules concatenate": {
			obj: jobDoneJSON,
			rules: append(paths(workv1.JSONPath{Name: "name", Path: ".metadata.name"}),
				workv1.FeedbackRule{Type: workv1.WellKnownStatusType}),
			wantValues: []workv1.FeedbackValue{strValue("name", "train"), strValue("JobComplete", "True"), intValue("JobSucceeded", 4)},
			wantStatus: metav1.ConditionTrue, wantReason: ReasonStatusFeedbackOK,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			values, cond := Feedback(obj(t, tc.obj), tc.rules)
			if diff := cmp.Diff(tc.wantValues, values); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
			if cond.Type != workv1.ManifestStatusFeedbackSynced || cond.Status != tc.wantStatus || cond.Reason != tc.wantReason {
				t.Errorf("condition = %s %s %s (%q), want %s %s %s", cond.Type, cond.Status, cond.Reason, cond.Message, workv1.ManifestStatusFeedbackSynced, tc.wantStatus, tc.wantReason)
			}
			for _, s := range tc.wantMessage {
				if !strings.Contains(cond.Message, s) {
					t.Errorf("message %q does not contain %q", cond.Message, s)
				}
			}
		})
	}
}
