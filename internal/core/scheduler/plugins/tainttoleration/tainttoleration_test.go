package tainttoleration

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
)

func TestMatches(t *testing.T) {
	taint := clusterv1.Taint{Key: "gpu", Value: "busy", Effect: clusterv1.TaintEffectNoSelect}
	cases := map[string]struct {
		toleration clusterv1beta1.Toleration
		want       bool
	}{
		"equal key and value":        {clusterv1beta1.Toleration{Key: "gpu", Operator: clusterv1beta1.TolerationOpEqual, Value: "busy"}, true},
		"empty operator means Equal": {clusterv1beta1.Toleration{Key: "gpu", Value: "busy"}, true},
		"equal, other value":         {clusterv1beta1.Toleration{Key: "gpu", Operator: clusterv1beta1.TolerationOpEqual, Value: "idle"}, false},
		"exists ignores the value":   {clusterv1beta1.Toleration{Key: "gpu", Operator: clusterv1beta1.TolerationOpExists}, true},
		"other key":                  {clusterv1beta1.Toleration{Key: "cpu", Operator: clusterv1beta1.TolerationOpExists}, false},
		"empty key with exists":      {clusterv1beta1.Toleration{Operator: clusterv1beta1.TolerationOpExists}, true},
		"empty key with equal value": {clusterv1beta1.Toleration{Value: "busy"}, true},
		"same effect":                {clusterv1beta1.Toleration{Key: "gpu", Operator: clusterv1beta1.TolerationOpExists, Effect: clusterv1beta1.TaintEffectNoSelect}, true},
		"other effect":               {clusterv1beta1.Toleration{Key: "gpu", Operator: clusterv1beta1.TolerationOpExists, Effect: clusterv1beta1.TaintEffectPreferNoSelect}, false},
		"unknown operator never":     {clusterv1beta1.Toleration{Key: "gpu", Operator: "Near"}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Matches(taint, tc.toleration); got != tc.want {
				t.Errorf("Matches(%+v, %+v) = %v, want %v", taint, tc.toleration, got, tc.want)
			}
		})
	}
}

func TestTolerated(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	added := metav1.NewTime(now.Add(-time.Hour))
	taint := clusterv1.Taint{Key: "k", Effect: clusterv1.TaintEffectNoSelect, TimeAdded: &added}
	exists := func(seconds *int64) clusterv1beta1.Toleration {
		return clusterv1beta1.Toleration{Key: "k", Operator: clusterv1beta1.TolerationOpExists, TolerationSeconds: seconds}
	}
	type out struct {
		Tolerated bool
		Expiry    time.Time
		Why       string
	}
	noTime := clusterv1.Taint{Key: "k", Effect: clusterv1.TaintEffectNoSelect}
	const expired = "no longer tolerated: tolerationSeconds expired"
	cases := map[string]struct {
		taint       clusterv1.Taint
		tolerations []clusterv1beta1.Toleration
		want        out
	}{
		"no toleration":               {taint, nil, out{}},
		"forever":                     {taint, []clusterv1beta1.Toleration{exists(nil)}, out{Tolerated: true}},
		"still within seconds":        {taint, []clusterv1beta1.Toleration{exists(ptr.To[int64](7200))}, out{Tolerated: true, Expiry: now.Add(time.Hour)}},
		"seconds run out":             {taint, []clusterv1beta1.Toleration{exists(ptr.To[int64](3600))}, out{Why: expired}},
		"expired but another forever": {taint, []clusterv1beta1.Toleration{exists(ptr.To[int64](60)), exists(nil)}, out{Tolerated: true}},
		// OCM counts tolerationSeconds from the taint's timeAdded, the zero time when it has none:
		// such a taint is not tolerated by a toleration with seconds, however many.
		"no timeAdded, tolerationSeconds: not tolerated": {noTime, []clusterv1beta1.Toleration{exists(ptr.To[int64](1 << 40))}, out{
			Why: "not tolerated: spec.tolerations[0] has tolerationSeconds, which count from the taint's timeAdded, and the taint has no timeAdded; " +
				"as in OCM, only a toleration without tolerationSeconds tolerates such a taint"}},
		"no timeAdded, and another toleration without seconds": {noTime, []clusterv1beta1.Toleration{exists(ptr.To[int64](60)), exists(nil)}, out{Tolerated: true}},
		"no timeAdded, no toleration":                          {noTime, nil, out{}},
		"the first matching toleration's reason is given": {noTime, []clusterv1beta1.Toleration{
			{Key: "other", Operator: clusterv1beta1.TolerationOpExists}, exists(ptr.To[int64](60)), exists(ptr.To[int64](70))}, out{
			Why: "not tolerated: spec.tolerations[1] has tolerationSeconds, which count from the taint's timeAdded, and the taint has no timeAdded; " +
				"as in OCM, only a toleration without tolerationSeconds tolerates such a taint"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got out
			got.Tolerated, got.Expiry, got.Why = Tolerated(tc.taint, tc.tolerations, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Tolerated() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
