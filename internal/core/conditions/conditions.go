package conditions

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Equal reports whether a and b say the same thing, in the same order.
func Equal(a, b []metav1.Condition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message || x.ObservedGeneration != y.ObservedGeneration {
			return false
		}
	}
	return true
}

// Same reports whether a and b say the same thing in their condition of type t: both without
// it, or both with the same status, reason, message and observed generation.
func Same(a, b []metav1.Condition, t string) bool {
	x, y := find(a, t), find(b, t)
	if x == nil || y == nil {
		return x == y
	}
	return x.Status == y.Status && x.Reason == y.Reason && x.Message == y.Message && x.ObservedGeneration == y.ObservedGeneration
}

func find(cs []metav1.Condition, t string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}
