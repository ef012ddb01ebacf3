package workstatus

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

func TestConditions(t *testing.T) {
	const gen = 7
	availableTrue := metav1.Condition{Type: workv1.ManifestAvailable, Status: metav1.ConditionTrue, Reason: ReasonResourceAvailable, Message: "The object exists on the managed cluster", ObservedGeneration: gen}
	rule := func(c metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: workv1.ManifestComplete, Status: c, Reason: reason, Message: msg, ObservedGeneration: gen}
	}
	cel := func(cond string, exprs ...string) workv1.ConditionRule {
		return workv1.ConditionRule{Condition: cond, Type: workv1.CELConditionExpressionsType, CelExpressions: exprs}
	}
	wellKnown := []workv1.ConditionRule{{Condition: workv1.ManifestComplete, Type: workv1.WellKnownConditionsType}}
	cases := map[string]struct {
		obj   string // empty: the object does not exist
		rules []workv1.ConditionRule
		want  []metav1.Condition
		// wantMessage, when set, replaces the last condition's message check by substrings.
		wantMessage []string
	}{
		"missing object is not available and rules are not evaluated": {
			rules: wellKnown,
			want: []metav1.Condition{{Type: workv1.ManifestAvailable, Status: metav1.ConditionFalse, Reason: ReasonResourceNotAvailable,
				Message: "The object does not exist on the managed cluster", ObservedGeneration: gen}},
		},
		"existing object without rules is available": {
			obj: configMapJSON, want: []metav1.Condition{availableTrue},
		},
		"finished job is Complete (OCM's well-known rule)": {
			obj: jobDoneJSON, rules: wellKnown,
			want: []metav1.Condition{availableTrue, rule(metav1.ConditionTrue, ReasonRuleEvaluated, "Job is finished")},
		},
		"failed job is Complete too": {
			obj: jobFailedJSON, rules: wellKnown,
			want: []metav1.Condition{availableTrue, rule(metav1.ConditionTrue, ReasonRuleEvaluated, "Job is finished")},
		},
		"running job is not Complete": {
			obj: jobRunningJSON, rules: wellKnown,
			want: []metav1.Condition{availableTrue, rule(metav1.ConditionFalse, ReasonRuleEvaluated, "Job is not finished")},
		},
		"job without status is not Complete (no expression error)": {
			obj: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"train","namespace":"ml"}}`, rules: wellKnown,
			want: []metav1.Condition{availableTrue, rule(metav1.ConditionFalse, ReasonRuleEvaluated, "Job is not finished")},
		},
		"pod without status is not Complete": {
			obj: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ml"}}`, rules: wellKnown,
			want: []metav1.Condition{availableTrue, rule(metav1.ConditionFalse, ReasonRuleEvaluated, "Pod has no phase yet")},
		},
		"well-known rule without a condition means Complete": {
			obj: jobDoneJSON, rules: []workv1.ConditionRule{{Type: workv1.WellKnownConditionsType}},
			want: []metav1.Condition{availableTrue, rule(metav1.ConditionTrue, ReasonRuleEvaluated, "Job is finished")},
		},
		"unknown rule type is Unknown": {
			obj: jobDoneJSON, rules: []workv1.ConditionRule{{Condition: "Done", Type: "Magic"}},
			want: []metav1.Condition{availableTrue, {Type: "Done", Status: metav1.ConditionUnknown, Reason: ReasonRuleInvalid,
				Message: `conditionRules[0]: unknown type "Magic"; use WellKnownConditions or CEL`, ObservedGeneration: gen}},
		},
		"well-known message overridden by the rule's message": {
			obj: jobDoneJSON, rules: []workv1.ConditionRule{{Condition: workv1.ManifestComplete, Type: workv1.WellKnownConditionsType, Message: "training done"}},
			want: []metav1.Condition{availableTrue, rule(metav1.ConditionTrue, ReasonRuleEvaluated, "training done")},
		},
		"succeeded pod is Complete": {
			obj: podJSON, rules: wellKnown,
			want: []metav1.Condition{availableTrue, rule(metav1.ConditionTrue, ReasonRuleEvaluated, "Pod is in phase Succeeded")},
		},
		"well-known rule for a kind without one sets nothing, as OCM": {
			obj: deploymentJSON, rules: wellKnown, want: []metav1.Condition{availableTrue},
		},
		"CEL true with default message": {
			obj:   deploymentJSON,
			rules: []workv1.ConditionRule{cel(workv1.ManifestComplete, "object.status.readyReplicas >= 2", "object.spec.replicas == 3")},
			want:  []metav1.Condition{availableTrue, rule(metav1.ConditionTrue, ReasonRuleEvaluated, "Manifest is Complete")},
		},
		"CEL false at the first false expression": {
			obj:   deploymentJSON,
			rules: []workv1.ConditionRule{cel(workv1.ManifestComplete, "object.status.readyReplicas == object.spec.replicas", "1/0 == 1")},
			want:  []metav1.Condition{availableTrue, rule(metav1.ConditionFalse, ReasonRuleEvaluated, "Manifest is not Complete")},
		},
		"CEL with hasConditions and a custom condition": {
			obj: deploymentJSON,
			rules: []workv1.ConditionRule{{Condition: "Ready", Type: workv1.CELConditionExpressionsType, Message: "web is ready",
				CelExpressions: []string{"hasConditions(object.status) && object.status.conditions.exists(c, c.type == 'Available' && c.status == 'True')"}}},
			want: []metav1.Condition{availableTrue, {Type: "Ready", Status: metav1.ConditionTrue, Reason: ReasonRuleEvaluated, Message: "web is ready", ObservedGeneration: gen}},
		},
		"CEL messageExpression sees result": {
			obj: deploymentJSON,
			rules: []workv1.ConditionRule{{Condition: "Scaled", Type: workv1.CELConditionExpressionsType,
				CelExpressions:    []string{"object.status.readyReplicas == object.spec.replicas"},
				MessageExpression: `result ? "all ready" : string(object.status.readyReplicas) + " of " + string(object.spec.replicas) + " ready"`}},
			want: []metav1.Condition{availableTrue, {Type: "Scaled", Status: metav1.ConditionFalse, Reason: ReasonRuleEvaluated, Message: "2 of 3 ready", ObservedGeneration: gen}},
		},
		"CEL compile error is False naming the expression": {
			obj:         deploymentJSON,
			rules:       []workv1.ConditionRule{cel(workv1.ManifestComplete, "object.status.readyReplicas ==")},
			want:        []metav1.Condition{availableTrue, rule(metav1.ConditionFalse, ReasonRuleExpressionError, "")},
			wantMessage: []string{`conditionRules[0].celExpressions[0] "object.status.readyReplicas =="`, "does not compile"},
		},
		"CEL evaluation error is False naming the expression": {
			obj:         deploymentJSON,
			rules:       []workv1.ConditionRule{cel(workv1.ManifestComplete, "object.invalid.key == 'x'")},
			want:        []metav1.Condition{availableTrue, rule(metav1.ConditionFalse, ReasonRuleExpressionError, "")},
			wantMessage: []string{`conditionRules[0].celExpressions[0] "object.invalid.key == 'x'"`, "no such key: invalid"},
		},
		"CEL non-bool result is False": {
			obj:         deploymentJSON,
			rules:       []workv1.ConditionRule{cel(workv1.ManifestComplete, "object.status.replicas")},
			want:        []metav1.Condition{availableTrue, rule(metav1.ConditionFalse, ReasonRuleExpressionError, "")},
			wantMessage: []string{"it must give a bool"},
		},
		"CEL over the cost limit is False": {
			obj:         deploymentJSON,
			rules:       []workv1.ConditionRule{cel(workv1.ManifestComplete, "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, a+b+c+d+e+f > 0))))))")},
			want:        []metav1.Condition{availableTrue, rule(metav1.ConditionFalse, ReasonRuleExpressionError, "")},
			wantMessage: []string{"cost"},
		},
		"a rule may set Available itself": {
			obj:   deploymentJSON,
			rules: []workv1.ConditionRule{cel(workv1.ManifestAvailable, "object.status.availableReplicas == object.spec.replicas")},
			want:  []metav1.Condition{{Type: workv1.ManifestAvailable, Status: metav1.ConditionFalse, Reason: ReasonRuleEvaluated, Message: "Manifest is not Available", ObservedGeneration: gen}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var o *unstructured.Unstructured
			if tc.obj != "" {
				o = obj(t, tc.obj)
			}
			got := Conditions(o, tc.rules, gen)
			opts := []cmp.Option{}
			if tc.wantMessage != nil {
				last := got[len(got)-1].Message
				for _, s := range tc.wantMessage {
					if !strings.Contains(last, s) {
						t.Errorf("message %q does not contain %q", last, s)
					}
				}
				opts = append(opts, cmpopts.IgnoreFields(metav1.Condition{}, "Message"))
			}
			if diff := cmp.Diff(tc.want, got, opts...); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConditionsBudget: the rules of one object share a budget, so many rules each under the
// per-expression limit still stop once together they exceed it.
func TestConditionsBudget(t *testing.T) {
	// About 10,500 each: two fit in a budget of 25,000, the third exceeds it.
	expensive := "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, a+b+c > 0)))"
	var rules []workv1.ConditionRule
	for i := range 4 {
		rules = append(rules, workv1.ConditionRule{Condition: "C" + string(rune('a'+i)), Type: workv1.CELConditionExpressionsType, CelExpressions: []string{expensive}})
	}
	got := conditionsWithBudget(obj(t, configMapJSON), rules, 1, 25_000)
	var summary []string
	for _, c := range got[1:] {
		s := string(c.Status)
		if strings.Contains(c.Message, "cost budget") {
			s += " over budget"
		}
		summary = append(summary, s)
	}
	want := []string{"True", "True", "False over budget", "False over budget"}
	if diff := cmp.Diff(want, summary); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
}

func TestFetchFailed(t *testing.T) {
	c := FetchFailed(errString("connection refused"), 3)
	want := metav1.Condition{Type: workv1.ManifestAvailable, Status: metav1.ConditionUnknown, Reason: ReasonFetchFailed,
		Message: "Cannot read the object on the managed cluster: connection refused", ObservedGeneration: 3}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
