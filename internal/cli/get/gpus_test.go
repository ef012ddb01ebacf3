package get

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/apitest"
)

func TestGPUs(t *testing.T) {
	cases := map[string]struct {
		cluster *apitest.ClusterWrapper
		want    string
	}{
		"no GPUs": {
			cluster: makeCluster("c", 0).Allocatable(clusterv1.ResourceCPU, "64"),
			want:    "-",
		},
		"zero nvidia.com/gpu": {
			cluster: makeCluster("c", 0).Allocatable(clusterv1.ResourceNvidiaGPU, "0"),
			want:    "-",
		},
		"total without claims": {
			cluster: makeCluster("c", 0).Allocatable(clusterv1.ResourceNvidiaGPU, "24"),
			want:    "24",
		},
		"one model": {
			cluster: makeCluster("c", 0).GPUClaim("NVIDIA-A100-SXM4-80GB", "16"),
			want:    "16 NVIDIA-A100-SXM4-80GB",
		},
		"claims win over the total": {
			cluster: makeCluster("c", 0).Allocatable(clusterv1.ResourceNvidiaGPU, "24").
				GPUClaim("NVIDIA-L4", "8").GPUClaim("NVIDIA-A100-SXM4-80GB", "16"),
			want: "16 NVIDIA-A100-SXM4-80GB, 8 NVIDIA-L4",
		},
		"other claims are ignored": {
			cluster: makeCluster("c", 0).Claim("region.open-cluster-management.io", "us-east").
				Claim("gpu.flotilla.io/product", "NVIDIA-L4").GPUClaim("NVIDIA-L4", "2"),
			want: "2 NVIDIA-L4",
		},
		"bad claims are skipped": {
			cluster: makeCluster("c", 0).GPUClaim("NVIDIA-L4", "two").GPUClaim("", "4").
				GPUClaim("NVIDIA-T4", "0").GPUClaim("NVIDIA-H100", "-1").GPUClaim("NVIDIA-A10", " 3 "),
			want: "3 NVIDIA-A10",
		},
		"only bad claims fall back to the total": {
			cluster: makeCluster("c", 0).Allocatable(clusterv1.ResourceNvidiaGPU, "4").GPUClaim("NVIDIA-L4", "four"),
			want:    "4",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, gpus(tc.cluster.Obj())); diff != "" {
				t.Errorf("gpus (-want +got):\n%s", diff)
			}
		})
	}
}
