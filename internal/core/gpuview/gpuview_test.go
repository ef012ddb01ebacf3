package gpuview

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

func claims(models string, counts map[string]string) []clusterv1.ManagedClusterClaim {
	out := []clusterv1.ManagedClusterClaim{{Name: clusterv1.GPUModelsClaim, Value: models}}
	for m, n := range counts {
		out = append(out, clusterv1.ManagedClusterClaim{Name: clusterv1.GPUCountClaimName(m), Value: n})
	}
	return out
}

func TestByModel(t *testing.T) {
	cases := map[string]struct {
		claims []clusterv1.ManagedClusterClaim
		want   map[string]int64
	}{
		"no claims": {want: map[string]int64{}},
		"two models": {
			claims: claims("NVIDIA-A100-SXM4-80GB,NVIDIA-L4", map[string]string{"NVIDIA-A100-SXM4-80GB": "16", "NVIDIA-L4": "8"}),
			want:   map[string]int64{"NVIDIA-A100-SXM4-80GB": 16, "NVIDIA-L4": 8},
		},
		"a model without a count is skipped": {
			claims: claims("NVIDIA-L4, NVIDIA-T4", map[string]string{"NVIDIA-T4": "2"}),
			want:   map[string]int64{"NVIDIA-T4": 2},
		},
		"bad counts are skipped, blanks trimmed": {
			claims: claims("A,B,C,D", map[string]string{"A": "two", "B": "0", "C": "-1", "D": " 3 "}),
			want:   map[string]int64{"D": 3},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ByModel(tc.claims)); diff != "" {
				t.Errorf("ByModel (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAllocatable(t *testing.T) {
	c := &clusterv1.ManagedCluster{}
	if got := Allocatable(c); got != 0 {
		t.Errorf("Allocatable of a cluster without GPUs = %d, want 0", got)
	}
	c.Status.Allocatable = clusterv1.ResourceList{clusterv1.ResourceNvidiaGPU: resource.MustParse("24")}
	if got := Allocatable(c); got != 24 {
		t.Errorf("Allocatable = %d, want 24", got)
	}
}

func TestUsageAndFreeFigures(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(d)} }
	fig := func(model, free string) usagev1alpha1.ResourceFigures {
		return usagev1alpha1.ResourceFigures{Name: usagev1alpha1.ResourceNvidiaGPU, Model: model, Free: resource.MustParse(free)}
	}
	cpu := usagev1alpha1.ResourceFigures{Name: "cpu", Free: resource.MustParse("3")}
	cases := map[string]struct {
		u       *usagev1alpha1.ResourceUsage
		state   UsageState
		figures []usagev1alpha1.ResourceFigures
	}{
		"none": {state: UsageNone},
		"never written": {
			u:     &usagev1alpha1.ResourceUsage{},
			state: UsageExpired,
		},
		"expired": {
			u: &usagev1alpha1.ResourceUsage{Status: usagev1alpha1.ResourceUsageStatus{ObservedTime: at(-time.Hour), ValidUntil: at(-time.Minute),
				Resources: []usagev1alpha1.ResourceFigures{fig("", "8")}}},
			state:   UsageExpired,
			figures: []usagev1alpha1.ResourceFigures{fig("", "8")},
		},
		"per model, the all-model figures left out": {
			u: &usagev1alpha1.ResourceUsage{Status: usagev1alpha1.ResourceUsageStatus{ObservedTime: at(-time.Second), ValidUntil: at(time.Minute),
				Resources: []usagev1alpha1.ResourceFigures{cpu, fig("", "12"), fig("H100", "8"), fig("A100", "4")}}},
			state:   UsageCurrent,
			figures: []usagev1alpha1.ResourceFigures{fig("H100", "8"), fig("A100", "4")},
		},
		"no model named: the all-model figures": {
			u: &usagev1alpha1.ResourceUsage{Status: usagev1alpha1.ResourceUsageStatus{ObservedTime: at(-time.Second),
				Resources: []usagev1alpha1.ResourceFigures{cpu, fig("", "12")}}},
			state:   UsageCurrent,
			figures: []usagev1alpha1.ResourceFigures{fig("", "12")},
		},
		"no GPUs": {
			u: &usagev1alpha1.ResourceUsage{Status: usagev1alpha1.ResourceUsageStatus{ObservedTime: at(-time.Second),
				Resources: []usagev1alpha1.ResourceFigures{cpu}}},
			state: UsageCurrent,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Usage(tc.u, now); got != tc.state {
				t.Errorf("Usage = %q, want %q", got, tc.state)
			}
			if diff := cmp.Diff(tc.figures, FreeFigures(tc.u)); diff != "" {
				t.Errorf("FreeFigures (-want +got):\n%s", diff)
			}
		})
	}
}

func TestByCluster(t *testing.T) {
	usage := func(ns, name string) usagev1alpha1.ResourceUsage {
		return usagev1alpha1.ResourceUsage{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	got := ByCluster([]usagev1alpha1.ResourceUsage{usage("a", usagev1alpha1.ResourceUsageName), usage("b", "other"), usage("c", usagev1alpha1.ResourceUsageName)})
	names := map[string]string{}
	for cluster, u := range got {
		names[cluster] = u.Namespace + "/" + u.Name
	}
	want := map[string]string{"a": "a/" + usagev1alpha1.ResourceUsageName, "c": "c/" + usagev1alpha1.ResourceUsageName}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("ByCluster (-want +got):\n%s", diff)
	}
}
