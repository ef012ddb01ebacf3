package gpuflavor

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

const (
	// Prefix begins every GPU model's flavor name.
	Prefix = "gpu-"
	// CPUOnly is the flavor of the nodes without a GPU model.
	CPUOnly = "cpu-only"
	// WorkerClusterQueue is the ClusterQueue the kueue-queues add-on keeps on each worker (the
	// name of OCM's Kueue examples); the hub's fleet queues point the teams' LocalQueues on the
	// workers at it.
	WorkerClusterQueue = "cluster-queue"
	// maxNameLength is a DNS-1123 label's.
	maxNameLength = 63
	hashLength    = 8
)

// Names names the flavor of each GPU model: "gpu-" and the model lowercased, each run of
// characters other than a-z and 0-9 made one "-" (a DNS-1123 label). A name longer than 63
// characters, and every name that two models of the set share (NVIDIA_T4 and nvidia.t4), is cut
// and ends in "-" and the first 8 hex digits of the model's SHA-256 instead, so that no two
// models share a flavor.
func Names(models []string) map[string]string {
	out := make(map[string]string, len(models))
	byName := map[string][]string{}
	for _, m := range models {
		name := Prefix + sanitize(m)
		if name == Prefix || len(name) > maxNameLength {
			name = hashed(name, m)
		}
		byName[name] = append(byName[name], m)
	}
	for name, ms := range byName {
		for _, m := range ms {
			if len(ms) > 1 {
				out[m] = hashed(name, m)
			} else {
				out[m] = name
			}
		}
	}
	return out
}

// sanitize lowercases s and turns each run of characters other than a-z and 0-9 into one "-",
// without one at either end.
func sanitize(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	return b.String()
}

// hashed is name cut to leave room for "-" and the model's hash, then those.
func hashed(name, model string) string {
	sum := sha256.Sum256([]byte(model))
	suffix := hex.EncodeToString(sum[:])[:hashLength]
	name = strings.TrimRight(name, "-")
	if limit := maxNameLength - hashLength - 1; len(name) > limit {
		name = strings.TrimRight(name[:limit], "-")
	}
	return name + "-" + suffix
}
