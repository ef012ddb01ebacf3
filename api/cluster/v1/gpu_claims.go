package v1

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// The ClusterClaims the Flotilla agent synthesizes into status.clusterClaims from its nodes'
// GPUs, so that placements can select on GPU inventory with claim selectors and CEL while the
// wire format stays OCM's. No ClusterClaim object on a spoke can have these names (object names
// have no '/'), so they cannot be spoofed.
// Claims the agent synthesizes from its nodes' GPUs.
const (
	// GPUClaimPrefix starts the name of every claim the agent synthesizes; the agent owns it, so
	// spoke claims under it are skipped.
	GPUClaimPrefix = "gpu.flotilla.io/"
	// GPUModelsClaim lists the GPU models with allocatable GPUs on Ready nodes, sorted and
	// comma-separated, as the nodes' nvidia.com/gpu.product label spells them.
	GPUModelsClaim = GPUClaimPrefix + "models"
	// GPUCountClaimPrefix followed by a model (see GPUCountClaimName) names the claim whose value
	// is that model's allocatable GPU count on Ready nodes, in decimal.
	GPUCountClaimPrefix = GPUClaimPrefix + "count."
)

// GPUCountClaimName is the name of the claim that counts a GPU model's allocatable GPUs:
// GPUCountClaimPrefix and the model lowercased, with characters a label key does not allow
// replaced by '-'. A model too long for a label key is cut and ends in a hash of the whole
// model, so distinct models keep distinct names. It returns "" for a model without letters or
// digits.
func GPUCountClaimName(model string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(model) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	const trim = "-_."
	m := strings.Trim(b.String(), trim)
	if m == "" {
		return ""
	}
	prefix := strings.TrimPrefix(GPUCountClaimPrefix, GPUClaimPrefix)
	if room := 63 - len(prefix); len(m) > room {
		h := fnv.New32a()
		_, _ = h.Write([]byte(model))
		suffix := fmt.Sprintf("-%08x", h.Sum32())
		m = strings.TrimRight(m[:room-len(suffix)], trim) + suffix
	}
	return GPUCountClaimPrefix + m
}
