package gpufit

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

func TestFitGang(t *testing.T) {
	q := resource.MustParse
	gang := func(model string, sets ...PodSet) Gang {
		return Gang{Resource: usagev1alpha1.ResourceNvidiaGPU, Model: model, PodSets: sets}
	}
	cases := map[string]struct {
		resources []usagev1alpha1.ResourceFigures
		gang      Gang
		want      Verdict
	}{
		"two 8-GPU pods on two free nodes": {
			resources: figures(a100, 8, 8, 2),
			gang:      gang(a100, PodSet{Name: "workers", Count: 2, Per: q("8")}),
			want:      Verdict{Fits: true, Message: a100 + ": all 2 pods fit (free per node: 8 on 2 nodes, 2 on 1 node)"},
		},
		"enough in total but on no node": {
			resources: figures(a100, 2, 2, 2, 2),
			gang:      gang(a100, PodSet{Name: "main", Count: 1, Per: q("8")}),
			want:      Verdict{Message: "needs 1 pod with 8 " + a100 + " each: none fit on its nodes (free per node: 2 on 4 nodes)"},
		},
		"one of two fits": {
			resources: figures(a100, 8, 4, 4),
			gang:      gang(a100, PodSet{Name: "workers", Count: 2, Per: q("8")}),
			want:      Verdict{Message: "needs 2 pods with 8 " + a100 + " each: only 1 pod fits on its nodes (free per node: 8 on 1 node, 4 on 2 nodes)"},
		},
		"several pods share a node": {
			resources: figures(a100, 8),
			gang:      gang(a100, PodSet{Name: "workers", Count: 4, Per: q("2")}),
			want:      Verdict{Fits: true, Message: a100 + ": all 4 pods fit (free per node: 8 on 1 node)"},
		},
		// Best fit puts the 2-GPU pods on the 2-free node, leaving the 8-free node for the big pod
		// whatever order the pod sets come in.
		"largest pods first": {
			resources: figures(a100, 8, 2),
			gang:      gang(a100, PodSet{Name: "small", Count: 1, Per: q("2")}, PodSet{Name: "big", Count: 1, Per: q("8")}),
			want:      Verdict{Fits: true, Message: a100 + ": all 2 pods fit (free per node: 8 on 1 node, 2 on 1 node)"},
		},
		"pods without the resource are not counted": {
			resources: figures(a100, 1),
			gang:      gang(a100, PodSet{Name: "launcher", Count: 1}, PodSet{Name: "worker", Count: 1, Per: q("1")}),
			want:      Verdict{Fits: true, Message: a100 + ": its pod fits (free per node: 1 on 1 node)"},
		},
		"another model": {
			resources: figures(a100, 8, 8),
			gang:      gang("NVIDIA-H100-80GB-HBM3", PodSet{Name: "main", Count: 1, Per: q("1")}),
			want:      Verdict{NoModel: true, Message: "has no nodes with NVIDIA-H100-80GB-HBM3 (nvidia.com/gpu); it has " + a100},
		},
		"nothing free": {
			resources: figures(a100, 0, 0),
			gang:      gang("", PodSet{Name: "a", Count: 1, Per: q("1")}, PodSet{Name: "b", Count: 3, Per: q("4")}),
			want:      Verdict{Message: "needs 3 pods with 4 nvidia.com/gpu each and 1 pod with 1 nvidia.com/gpu each: none fit on its nodes (free per node: none)"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := FitGang(&usagev1alpha1.ResourceUsageStatus{Resources: tc.resources}, tc.gang)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("FitGang (-want +got):\n%s", diff)
			}
		})
	}
}

// Gangs offered a moment ago, which the figures do not count yet, are placed first.
func TestFitGangAfter(t *testing.T) {
	q := resource.MustParse
	gang := func(model string, count int32, per string) Gang {
		return Gang{Resource: usagev1alpha1.ResourceNvidiaGPU, Model: model, PodSets: []PodSet{{Name: "main", Count: count, Per: q(per)}}}
	}
	st := &usagev1alpha1.ResourceUsageStatus{Resources: figures(a100, 8, 8)}
	cases := map[string]struct {
		claimed []Gang
		gang    Gang
		want    Verdict
	}{
		"no claims: as FitGang": {gang: gang(a100, 2, "8"),
			want: Verdict{Fits: true, Message: a100 + ": all 2 pods fit (free per node: 8 on 2 nodes)"}},
		"a claim of one node leaves one": {claimed: []Gang{gang(a100, 1, "8")}, gang: gang(a100, 2, "8"),
			want: Verdict{Message: "needs 2 pods with 8 " + a100 + " each: only 1 pod fits on its nodes (free per node: 8 on 2 nodes, less 1 pod offered to it since these figures)"}},
		"a claim packs onto one node": {claimed: []Gang{gang(a100, 2, "4")}, gang: gang(a100, 1, "8"),
			want: Verdict{Fits: true, Message: a100 + ": its pod fits (free per node: 8 on 2 nodes, less 2 pods offered to it since these figures)"}},
		"a claim of any model counts": {claimed: []Gang{gang("", 2, "8")}, gang: gang(a100, 1, "1"),
			want: Verdict{Message: "needs 1 pod with 1 " + a100 + " each: none fit on its nodes (free per node: 8 on 2 nodes, less 2 pods offered to it since these figures)"}},
		"a claim of another resource does not": {claimed: []Gang{{Resource: "google.com/tpu", PodSets: []PodSet{{Count: 2, Per: q("8")}}}}, gang: gang(a100, 2, "8"),
			want: Verdict{Fits: true, Message: a100 + ": all 2 pods fit (free per node: 8 on 2 nodes)"}},
		"claims beyond the nodes are placed as far as they go": {claimed: []Gang{gang(a100, 3, "8")}, gang: gang(a100, 1, "1"),
			want: Verdict{Message: "needs 1 pod with 1 " + a100 + " each: none fit on its nodes (free per node: 8 on 2 nodes, less 2 pods offered to it since these figures)"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, FitGangAfter(st, tc.claimed, tc.gang)); diff != "" {
				t.Errorf("FitGangAfter (-want +got):\n%s", diff)
			}
		})
	}
}
