package addonconversion

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// errs keeps the first error of a conversion, so that the field-by-field code reads straight.
type errs struct{ err error }

func (e *errs) keep(err error) {
	if e.err == nil {
		e.err = err
	}
}

// recastInto is recast that records its error in e.
func recastInto[T any](e *errs, in any) T {
	out, err := recast[T](in)
	e.keep(err)
	return out
}

// carryInto is carry that records its error in e.
func carryInto[V, W any](e *errs, a *annotations, fromKey, toKey string, v V, conv func(V) W, back func(W) V) W {
	out, err := carry(a, fromKey, toKey, v, conv, back)
	e.keep(err)
	return out
}

// cloneConditions copies conditions, which both versions share.
func cloneConditions(in []metav1.Condition) []metav1.Condition {
	if in == nil {
		return nil
	}
	out := make([]metav1.Condition, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}
