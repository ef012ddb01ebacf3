// Package fieldmatch compares a scalar an agent wants in an object with the one the API server
// holds, as the API server writes values back: numbers by value (JSON decodes them as int64 or
// float64), and resource quantities canonicalized ("1000m" comes back as "1", "0.5Gi" as
// "512Mi", a GPU count written as 8 as "8"). The work agent (whether an object already has what
// a manifest says) and the config-policy-controller add-on (whether an object has what a policy's
// object template says) compare through it.
package fieldmatch

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/resource"
)

// ScalarEqual reports whether have, the server's value, is want.
func ScalarEqual(have, want any) bool {
	if wf, ok := number(want); ok {
		if hf, ok := number(have); ok {
			return wf == hf
		}
		hq, ok := quantity(have)
		return ok && hq.AsApproximateFloat64() == wf
	}
	if reflect.DeepEqual(have, want) {
		return true
	}
	wq, okW := quantity(want)
	hq, okH := quantity(have)
	return okW && okH && wq.Cmp(hq) == 0
}

// quantity parses v as a resource quantity, if it is a string that is one.
func quantity(v any) (resource.Quantity, bool) {
	s, ok := v.(string)
	if !ok {
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(s)
	return q, err == nil
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
