package workstatus

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/jsonpath"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// MaxJSONRawLength bounds a JsonRaw feedback value, as OCM's agent does by default (and as the
// API's fieldValue.jsonRaw allows).
const MaxJSONRawLength = 1024

// Reasons of the StatusFeedbackSynced condition, OCM's.
const (
	ReasonNoStatusFeedback   = "NoStatusFeedbackSynced"
	ReasonStatusFeedbackOK   = "StatusFeedbackSynced"
	ReasonStatusFeedbackFail = "StatusFeedbackSyncFailed"
)

// Feedback evaluates a manifest's feedbackRules against the live object. It returns the values,
// in rule order, and the StatusFeedbackSynced condition: True with reason NoStatusFeedbackSynced
// when there are no rules, True with reason StatusFeedbackSynced when every path could be read,
// and False with reason StatusFeedbackSyncFailed and a message naming each value that could not
// (the values that could be read are still returned). A path that finds nothing reports no value
// and is not a failure, as in OCM. The condition carries no ObservedGeneration: the caller sets
// it with the work's generation.
func Feedback(obj *unstructured.Unstructured, rules []workv1.FeedbackRule) ([]workv1.FeedbackValue, metav1.Condition) {
	cond := metav1.Condition{Type: workv1.ManifestStatusFeedbackSynced, Status: metav1.ConditionTrue}
	if len(rules) == 0 {
		cond.Reason = ReasonNoStatusFeedback
		cond.Message = "No feedback rules are configured for this manifest"
		return nil, cond
	}
	var values []workv1.FeedbackValue
	var problems []string
	for i, rule := range rules {
		var paths []workv1.JSONPath
		switch rule.Type {
		case workv1.WellKnownStatusType:
			paths = wellKnownStatus[obj.GroupVersionKind()]
			if len(paths) == 0 {
				problems = append(problems, fmt.Sprintf("feedbackRules[%d]: WellKnownStatus has no values for %s; use type JSONPaths to name the fields to report", i, gvkString(obj)))
				continue
			}
		case workv1.JSONPathsType:
			paths = rule.JSONPaths
		default:
			problems = append(problems, fmt.Sprintf("feedbackRules[%d]: unknown type %q; use WellKnownStatus or JSONPaths", i, rule.Type))
			continue
		}
		for _, p := range paths {
			if p.Version != "" && p.Version != obj.GroupVersionKind().Version {
				problems = append(problems, fmt.Sprintf("%s (path %s): version %s does not match the object's version %s; set version to %s or leave it empty",
					p.Name, p.Path, p.Version, obj.GroupVersionKind().Version, obj.GroupVersionKind().Version))
				continue
			}
			v, err := valueAt(obj, p)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s (path %s): %v", p.Name, p.Path, err))
				continue
			}
			if v != nil {
				values = append(values, *v)
			}
		}
	}
	if len(problems) > 0 {
		cond.Status = metav1.ConditionFalse
		cond.Reason = ReasonStatusFeedbackFail
		cond.Message = "Status feedback of " + objectString(obj) + " failed: " + strings.Join(problems, "; ")
		return values, cond
	}
	cond.Reason = ReasonStatusFeedbackOK
	cond.Message = "Status feedback values were read"
	return values, cond
}

// valueAt reads one path. Paths are evaluated against the whole object, as OCM does
// (.status.readyReplicas); a path that finds nothing there is tried against the object's status
// too, so the status-relative form (.readyReplicas) works as well. nil, nil means nothing found.
func valueAt(obj *unstructured.Unstructured, p workv1.JSONPath) (*workv1.FeedbackValue, error) {
	jp := jsonpath.New(p.Name).AllowMissingKeys(true)
	if err := jp.Parse("{" + p.Path + "}"); err != nil {
		return nil, fmt.Errorf("not a valid JSONPath: %v; write it as kubectl's jsonpath without braces, for example .status.readyReplicas", err)
	}
	found, err := find(jp, obj.Object)
	if err != nil {
		return nil, err
	}
	if found == nil {
		if status, ok := obj.Object["status"].(map[string]any); ok {
			if found, err = find(jp, status); err != nil {
				return nil, err
			}
		}
	}
	if found == nil {
		return nil, nil
	}
	return fieldValue(p.Name, found.v)
}

type result struct{ v any }

// find returns the first result, or all results of the first path as a list when there are
// several, or nil when there are none (or the value is null).
func find(jp *jsonpath.JSONPath, data any) (*result, error) {
	res, err := jp.FindResults(data)
	if err != nil {
		return nil, fmt.Errorf("cannot be evaluated: %v", err)
	}
	if len(res) == 0 || len(res[0]) == 0 {
		return nil, nil
	}
	if len(res) == 1 && len(res[0]) == 1 {
		v := res[0][0].Interface()
		if v == nil {
			return nil, nil
		}
		return &result{v}, nil
	}
	list := make([]any, 0, len(res[0]))
	for _, r := range res[0] {
		list = append(list, r.Interface())
	}
	return &result{list}, nil
}

func fieldValue(name string, v any) (*workv1.FeedbackValue, error) {
	fv := workv1.FeedbackValue{Name: name}
	switch t := v.(type) {
	case int64:
		fv.Value = workv1.FieldValue{Type: workv1.Integer, Integer: &t}
	case int:
		i := int64(t)
		fv.Value = workv1.FieldValue{Type: workv1.Integer, Integer: &i}
	case string:
		fv.Value = workv1.FieldValue{Type: workv1.String, String: &t}
	case bool:
		fv.Value = workv1.FieldValue{Type: workv1.Boolean, Boolean: &t}
	default:
		raw, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("cannot be written as JSON: %v", err)
		}
		if len(raw) > MaxJSONRawLength {
			return nil, fmt.Errorf("leads to %d bytes of JSON, more than the %d a value may hold; point the path at a single field", len(raw), MaxJSONRawLength)
		}
		s := string(raw)
		fv.Value = workv1.FieldValue{Type: workv1.JSONRaw, JSONRaw: &s}
	}
	return &fv, nil
}

func gvkString(obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	if gvk.Group == "" {
		return gvk.Version + " " + gvk.Kind
	}
	return gvk.Group + "/" + gvk.Version + " " + gvk.Kind
}

func objectString(obj *unstructured.Unstructured) string {
	name := obj.GetName()
	if ns := obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return obj.GetKind() + " " + name
}
