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
