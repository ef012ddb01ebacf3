package workstatus

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// Reasons of the conditions Conditions sets. The ConditionRule prefix marks a condition as set
// by a condition rule (OCM's convention, which Merge relies on to drop the conditions of rules
// that were removed).
const (
	ReasonRuleEvaluated       = "ConditionRuleEvaluated"
	ReasonRuleExpressionError = "ConditionRuleExpressionError"
	ReasonRuleInternalError   = "ConditionRuleInternalError"
	ReasonRuleInvalid         = "ConditionRuleInvalid"

	ReasonResourceAvailable    = "ResourceAvailable"
	ReasonResourceNotAvailable = "ResourceNotAvailable"
	ReasonFetchFailed          = "FetchingResourceFailed"

	ruleReasonPrefix = "ConditionRule"
)

// Conditions evaluates one manifest's conditionRules against the live object and adds the
// default Available condition: True when the object exists on the spoke (obj is not nil), False
// when it does not (then no rule is evaluated). Every condition carries generation as its
// ObservedGeneration and no LastTransitionTime (Merge sets it).
//
// A WellKnownConditions rule uses the built-in rule for the object's kind and the rule's
// condition (Complete for Jobs and Pods, as OCM); where there is none it sets nothing, as OCM.
// A CEL rule is True when every expression is true over the variable object, False at the
// first false one; an expression that does not compile, fails, gives no bool or exceeds the cost
// limit makes the condition False with reason ConditionRuleExpressionError and a message naming
// it. message, or messageExpression (variables object and result), is the condition's message;
// without either it is "Manifest is <condition>" or "Manifest is not <condition>", as OCM.
// All the rules of one object share a cost budget of RuleCostBudget.
func Conditions(obj *unstructured.Unstructured, rules []workv1.ConditionRule, generation int64) []metav1.Condition {
	return conditionsWithBudget(obj, rules, generation, RuleCostBudget)
}

func conditionsWithBudget(obj *unstructured.Unstructured, rules []workv1.ConditionRule, generation, budget int64) []metav1.Condition {
	if obj == nil {
		return []metav1.Condition{{
			Type: workv1.ManifestAvailable, Status: metav1.ConditionFalse, Reason: ReasonResourceNotAvailable,
			Message: "The object does not exist on the managed cluster", ObservedGeneration: generation,
		}}
	}
	out := []metav1.Condition{{
		Type: workv1.ManifestAvailable, Status: metav1.ConditionTrue, Reason: ReasonResourceAvailable,
		Message: "The object exists on the managed cluster", ObservedGeneration: generation,
	}}
	for i, rule := range rules {
		c, ok := evalRule(obj, i, rule, &budget)
		if !ok {
			continue
		}
		c.ObservedGeneration = generation
		// A rule may set Available itself, replacing the default (as in OCM, where rules run last).
		if j := slices.IndexFunc(out, func(x metav1.Condition) bool { return x.Type == c.Type }); j >= 0 {
			out[j] = c
			continue
		}
		out = append(out, c)
	}
	return out
}

// FetchFailed is the Available condition of an object the agent could not read (for a reason
// other than its absence): Unknown, naming the error.
func FetchFailed(err error, generation int64) metav1.Condition {
	return metav1.Condition{
		Type: workv1.ManifestAvailable, Status: metav1.ConditionUnknown, Reason: ReasonFetchFailed,
		Message: fmt.Sprintf("Cannot read the object on the managed cluster: %v", err), ObservedGeneration: generation,
	}
}

// IsRuleCondition reports whether a condition was set by a condition rule.
func IsRuleCondition(c metav1.Condition) bool {
	return strings.HasPrefix(c.Reason, ruleReasonPrefix)
}

// evalRule returns the condition a rule sets, and false when it sets none.
func evalRule(obj *unstructured.Unstructured, i int, rule workv1.ConditionRule, budget *int64) (metav1.Condition, bool) {
	field := fmt.Sprintf("conditionRules[%d]", i)
	switch rule.Type {
	case workv1.WellKnownConditionsType:
		condition := rule.Condition
		if condition == "" {
			condition = workv1.ManifestComplete
		}
		known, ok := wellKnownConditions[obj.GroupVersionKind()][condition]
		if !ok {
			return metav1.Condition{}, false
		}
		if rule.Message != "" {
			known.Message = rule.Message
			known.MessageExpression = ""
		}
		if rule.MessageExpression != "" {
			known.MessageExpression = rule.MessageExpression
		}
		return evalCEL(obj, field, known, budget), true
	case workv1.CELConditionExpressionsType:
		if rule.Condition == "" {
			return metav1.Condition{}, false
		}
		return evalCEL(obj, field, rule, budget), true
	default:
		if rule.Condition == "" {
			return metav1.Condition{}, false
		}
		return metav1.Condition{
			Type: rule.Condition, Status: metav1.ConditionUnknown, Reason: ReasonRuleInvalid,
			Message: fmt.Sprintf("%s: unknown type %q; use WellKnownConditions or CEL", field, rule.Type),
		}, true
	}
}

func evalCEL(obj *unstructured.Unstructured, field string, rule workv1.ConditionRule, budget *int64) metav1.Condition {
	c := metav1.Condition{Type: rule.Condition, Status: metav1.ConditionTrue, Reason: ReasonRuleEvaluated}
	vars := map[string]any{"object": obj.Object}
	for j, expr := range rule.CelExpressions {
		v, err := evalExpr(ruleEnvKind, expr, vars, budget)
		if err != nil {
			c.Status, c.Reason = metav1.ConditionFalse, ReasonRuleExpressionError
			c.Message = fmt.Sprintf("%s.celExpressions[%d] %q: %v", field, j, expr, err)
			return c
		}
		b, ok := v.(bool)
		if !ok {
			c.Status, c.Reason = metav1.ConditionFalse, ReasonRuleExpressionError
			c.Message = fmt.Sprintf("%s.celExpressions[%d] %q gives %T; it must give a bool", field, j, expr, v)
			return c
		}
		if !b {
			c.Status = metav1.ConditionFalse
			break
		}
	}
	result := c.Status == metav1.ConditionTrue
	if rule.MessageExpression != "" {
		vars["result"] = result
		v, err := evalExpr(messageEnvKind, rule.MessageExpression, vars, budget)
		switch s, ok := v.(string); {
		case err != nil:
			c.Message = fmt.Sprintf("%s.messageExpression %q: %v", field, rule.MessageExpression, err)
			return c
		case !ok:
			c.Message = fmt.Sprintf("%s.messageExpression %q gives %T; it must give a string", field, rule.MessageExpression, v)
			return c
		case s != "":
			c.Message = s
			return c
		}
	}
	switch {
	case rule.Message != "":
		c.Message = rule.Message
	case result:
		c.Message = "Manifest is " + rule.Condition
	default:
		c.Message = "Manifest is not " + rule.Condition
	}
	return c
}
