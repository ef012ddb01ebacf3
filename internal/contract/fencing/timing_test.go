package fencing

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	failoverv1alpha1 "github.com/flotilla/flotilla/api/failover/v1alpha1"
)

func TestParseTiming(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    Timing
		wantErr string
	}{
		"default":              {in: Default.String(), want: Default},
		"any order":            {in: "lost=1m fence=30s lease=10s", want: Timing{Lease: 10 * time.Second, FenceAfter: 30 * time.Second, LostAfter: time.Minute}},
		"exactly the bound":    {in: "lease=5s fence=20s lost=30s", want: Default},
		"below the bound":      {in: "lease=5s fence=20s lost=29s", wantErr: "must be at least fence after (20s) + lease (5s) + the clock-skew bound (5s)"},
		"negative fence":       {in: "lease=5s fence=-1s lost=30s", wantErr: "fence after must be positive"},
		"fence below a lease":  {in: "lease=10s fence=5s lost=30s", wantErr: "fence after (5s) must be at least 2 leases (10s each)"},
		"fence below 2 leases": {in: "lease=10s fence=19s lost=40s", wantErr: "fence after (19s) must be at least 2 leases"},
		"fence of 2 leases":    {in: "lease=10s fence=20s lost=35s", want: Timing{Lease: 10 * time.Second, FenceAfter: 20 * time.Second, LostAfter: 35 * time.Second}},
		"zero lease":           {in: "lease=0s fence=1s lost=30s", wantErr: "lease must be positive"},
		"missing key":          {in: "lease=5s fence=20s", wantErr: "needs lease, fence and lost"},
		"repeated key":         {in: "lease=5s lease=5s fence=20s lost=30s", wantErr: "once each"},
		"unknown key":          {in: "lease=5s fence=20s lost=30s grace=1s", wantErr: `unknown key "grace"`},
		"not a duration":       {in: "lease=5 fence=20s lost=30s", wantErr: "lease: time: missing unit"},
		"no equals":            {in: "lease fence=20s lost=30s", wantErr: "not key=duration"},
		"empty":                {in: "", wantErr: "needs lease, fence and lost"},
		"names the annotation": {in: "x", wantErr: AnnotationTiming},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseTiming(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseTiming(%q) error = %v, want one containing %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseTiming(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestCombine(t *testing.T) {
	a := Timing{Lease: 5 * time.Second, FenceAfter: 20 * time.Second, LostAfter: 30 * time.Second}
	b := Timing{Lease: 2 * time.Second, FenceAfter: 60 * time.Second, LostAfter: 70 * time.Second}
	tests := map[string]struct {
		in     []Timing
		want   Timing
		wantOK bool
	}{
		"none": {},
		"one":  {in: []Timing{a}, want: a, wantOK: true},
		"two":  {in: []Timing{a, b}, want: Timing{Lease: 2 * time.Second, FenceAfter: 20 * time.Second, LostAfter: 70 * time.Second}, wantOK: true},
		// The long lease of one and the short fence of the other: the fence is still two of the
		// shortest lease.
		"a long lease and a short fence": {in: []Timing{
			{Lease: 10 * time.Second, FenceAfter: 20 * time.Second, LostAfter: 35 * time.Second},
			{Lease: time.Second, FenceAfter: 2 * time.Second, LostAfter: 8 * time.Second},
		}, want: Timing{Lease: time.Second, FenceAfter: 2 * time.Second, LostAfter: 35 * time.Second}, wantOK: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := Combine(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" || ok != tc.wantOK {
				t.Errorf("Combine ok=%v want %v (-want +got):\n%s", ok, tc.wantOK, diff)
			}
			if ok {
				if err := got.Validate(); err != nil {
					t.Errorf("combining valid timings gave an invalid one: %v", err)
				}
			}
		})
	}
}

// TestCombineKeepsTheRules combines every pair of valid timings with small whole seconds: the
// hub writes the combination to the cluster, and the agent would refuse an invalid one.
func TestCombineKeepsTheRules(t *testing.T) {
	var valid []Timing
	for lease := 1; lease <= 4; lease++ {
		for fence := 1; fence <= 10; fence++ {
			for lost := 1; lost <= 20; lost++ {
				x := Timing{Lease: time.Duration(lease) * time.Second, FenceAfter: time.Duration(fence) * time.Second, LostAfter: time.Duration(lost) * time.Second}
				if x.Validate() == nil {
					valid = append(valid, x)
				}
			}
		}
	}
	if len(valid) == 0 {
		t.Fatal("no valid timing in the range")
	}
	for _, x := range valid {
		for _, y := range valid {
			if got, _ := Combine([]Timing{x, y}); got.Validate() != nil {
				t.Fatalf("Combine(%s, %s) = %s: %v", x, y, got, got.Validate())
			}
		}
	}
}

func TestFromSpecDefaults(t *testing.T) {
	got := FromSpec(failoverv1alpha1.FailoverPolicySpec{ClusterSet: "gpu", FenceAfterSeconds: 40, LostAfterSeconds: 60})
	want := Timing{Lease: 5 * time.Second, FenceAfter: 40 * time.Second, LostAfter: time.Minute}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FromSpec (-want +got):\n%s", diff)
	}
}

func TestEpoch(t *testing.T) {
	tests := map[string]struct {
		in   map[string]string
		want int64
	}{
		"unset":    {},
		"set":      {in: map[string]string{AnnotationEpoch: "3"}, want: 3},
		"negative": {in: map[string]string{AnnotationEpoch: "-3"}},
		"garbage":  {in: map[string]string{AnnotationEpoch: "three"}},
	}
	for name, tc := range tests {
		if got := Epoch(tc.in); got != tc.want {
			t.Errorf("%s: Epoch = %d, want %d", name, got, tc.want)
		}
	}
}
