package gpuflavor

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var dns1123Label = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

const h100 = "NVIDIA-H100-80GB-HBM3"

func TestNames(t *testing.T) {
	long := strings.Repeat("Very-Long-GPU-Model-Name-", 3) // 75 characters
	for name, tc := range map[string]struct {
		models []string
		want   map[string]string
	}{
		"lowercased": {
			models: []string{h100},
			want:   map[string]string{h100: "gpu-nvidia-h100-80gb-hbm3"},
		},
		"spaces, underscores and dots become one dash, none at the ends": {
			models: []string{" NVIDIA A100_SXM4..80GB_ "},
			want:   map[string]string{" NVIDIA A100_SXM4..80GB_ ": "gpu-nvidia-a100-sxm4-80gb"},
		},
		"names that collide all get their model's hash": {
			models: []string{"NVIDIA_T4", "nvidia.t4", "NVIDIA-T4", "NVIDIA-L4"},
			want: map[string]string{
				"NVIDIA_T4": "gpu-nvidia-t4-" + hash8("NVIDIA_T4"),
				"nvidia.t4": "gpu-nvidia-t4-" + hash8("nvidia.t4"),
				"NVIDIA-T4": "gpu-nvidia-t4-" + hash8("NVIDIA-T4"),
				"NVIDIA-L4": "gpu-nvidia-l4",
			},
		},
		"too long: cut, with the hash": {
			models: []string{long},
			want:   map[string]string{long: "gpu-very-long-gpu-model-name-very-long-gpu-model-name-" + hash8(long)},
		},
		"nothing left after sanitizing: the hash": {
			models: []string{"___"},
			want:   map[string]string{"___": "gpu-" + hash8("___")},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := Names(tc.models)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			seen := map[string]string{}
			for model, n := range got {
				if !dns1123Label.MatchString(n) || len(n) > 63 {
					t.Errorf("model %q: flavor %q is not a DNS-1123 label", model, n)
				}
				if other, ok := seen[n]; ok {
					t.Errorf("models %q and %q share flavor %q", model, other, n)
				}
				seen[n] = model
			}
		})
	}
}

func hash8(model string) string {
	sum := sha256.Sum256([]byte(model))
	return hex.EncodeToString(sum[:4])
}
