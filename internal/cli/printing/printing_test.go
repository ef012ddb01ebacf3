package printing

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

const day = 24 * time.Hour

var now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

func TestAge(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(now)
	cases := map[string]struct {
		created metav1.Time
		want    string
	}{
		"seconds":              {created: ago(5 * time.Second), want: "5s"},
		"under two minutes":    {created: ago(119 * time.Second), want: "119s"},
		"minutes and seconds":  {created: ago(3*time.Minute + 20*time.Second), want: "3m20s"},
		"minutes":              {created: ago(3 * time.Minute), want: "3m"},
		"hours":                {created: ago(26 * time.Hour), want: "26h"},
		"days and hours":       {created: ago(2*day + 4*time.Hour), want: "2d4h"},
		"years":                {created: ago(800 * day), want: "2y70d"},
		"unset":                {want: "<unknown>"},
		"clock skew":           {created: metav1.NewTime(now.Add(time.Minute)), want: "<invalid>"},
		"under a second ahead": {created: metav1.NewTime(now.Add(500 * time.Millisecond)), want: "0s"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Age(tc.created, clk)); diff != "" {
				t.Errorf("age (-want +got):\n%s", diff)
			}
		})
	}
}
