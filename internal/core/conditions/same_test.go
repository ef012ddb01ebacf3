package conditions

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

func TestSame(t *testing.T) {
	ready := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "R", Message: "m", ObservedGeneration: 1}
	with := func(edit func(*metav1.Condition)) []metav1.Condition {
		c := ready
		edit(&c)
		return []metav1.Condition{{Type: "Other", Status: metav1.ConditionFalse}, c}
	}
	cases := map[string]struct {
		a, b []metav1.Condition
		want bool
	}{
		"both without it":         {a: nil, b: []metav1.Condition{{Type: "Other"}}, want: true},
		"one without it":          {a: []metav1.Condition{ready}, b: nil, want: false},
		"only the time differs":   {a: []metav1.Condition{ready}, b: with(func(c *metav1.Condition) { c.LastTransitionTime = metav1.Now() }), want: true},
		"the status differs":      {a: []metav1.Condition{ready}, b: with(func(c *metav1.Condition) { c.Status = metav1.ConditionFalse }), want: false},
		"the reason differs":      {a: []metav1.Condition{ready}, b: with(func(c *metav1.Condition) { c.Reason = "S" }), want: false},
		"the message differs":     {a: []metav1.Condition{ready}, b: with(func(c *metav1.Condition) { c.Message = "n" }), want: false},
		"the generation differs":  {a: []metav1.Condition{ready}, b: with(func(c *metav1.Condition) { c.ObservedGeneration = 2 }), want: false},
		"other conditions differ": {a: []metav1.Condition{ready, {Type: "Other"}}, b: []metav1.Condition{ready}, want: true},
	}
	got, want := sets.New[string](), sets.New[string]()
	for name, tc := range cases {
		if Same(tc.a, tc.b, "Ready") {
			got.Insert(name)
		}
		if tc.want {
			want.Insert(name)
		}
	}
	if diff := cmp.Diff(sets.List(want), sets.List(got)); diff != "" {
		t.Errorf("cases judged the same (-want +got):\n%s", diff)
	}
}
