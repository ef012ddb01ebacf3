// Inventory: what the agent reports about its cluster in ManagedCluster status besides
// conditions. ComputeInventory is pure: the agent lists the spoke's Nodes and ClusterClaims and
// reads its version, and ComputeInventory turns them into status.capacity, status.allocatable,
// status.version and status.clusterClaims.
//
// Resources are summed over Ready nodes only, since a NotReady node's capacity cannot be
// scheduled: cpu, memory, pods and every extended resource (a name with a domain outside
// kubernetes.io, such as nvidia.com/gpu).
//
// Claims are copied as OCM's agent copies them: claims labeled open-cluster-management.io/spoke-only
// never leave the spoke; the reserved claims (id.k8s.io, kubeversion.open-cluster-management.io, ...)
// come first, sorted by name; then the custom claims, sorted by name and cut to the cap (20 by
// default). A claim the hub would refuse (a value outside 1..1024 characters, a name outside
// 1..253) is skipped and named in the returned warnings, so that one bad ClusterClaim cannot make
// every status write fail.
//
// GPU inventory by model is reported as ClusterClaims the agent synthesizes; they are appended
// after the copied claims and do not count toward the cap:
//
//	gpu.flotilla.io/models                 NVIDIA-A100-SXM4-80GB,NVIDIA-H100-80GB-HBM3
//	gpu.flotilla.io/count.<model>          allocatable nvidia.com/gpu on Ready nodes of that model,
//	                                       such as gpu.flotilla.io/count.nvidia-a100-sxm4-80gb = 16
//
// The model is the node label nvidia.com/gpu.product (set by NVIDIA GPU feature discovery); in a
// count claim's name it is lowercased and cut to fit a label key (clusterv1.GPUCountClaimName). Why claims:
// status.clusterClaims is already part of OCM's wire format, so any OCM client or hub stores and
// serves them unchanged, and placements select on them with both claimSelector (each claim is a
// label-like key: "gpu.flotilla.io/count.nvidia-a100-sxm4-80gb Exists", or
// "gpu.flotilla.io/models In [NVIDIA-A100-SXM4-80GB]" for single-model clusters) and CEL
// (managedCluster.status.clusterClaims.exists(c, c.name == "gpu.flotilla.io/count.nvidia-a100-sxm4-80gb"
// && int(c.value) >= 16)). Their names contain a slash, which a ClusterClaim object's name cannot,
// so a ClusterClaim on the spoke can neither spoof nor collide with them; and they are not
// reserved-looking names, which would take them outside OCM's rules for custom claims. The total
// count stays in status.capacity and status.allocatable under nvidia.com/gpu.
package registration

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
)

const (
	// NodeLabelGPUProduct is the node label that names a node's GPU model.
	NodeLabelGPUProduct = "nvidia.com/gpu.product"
)

// Limits the hub's schema puts on status.clusterClaims; claims outside them would make the whole
// status write fail.
const (
	maxClaimNameLength  = 253
	maxClaimValueLength = 1024
	maxStatusClaims     = 256
	// maxLabelNameLength is the limit on the part of a label key after the slash; claim names
	// within it work as claimSelector keys.
	maxLabelNameLength = 63
)

// Inventory is the part of a ManagedCluster's status the agent computes from its cluster.
type Inventory struct {
	Capacity      clusterv1.ResourceList
	Allocatable   clusterv1.ResourceList
	Version       clusterv1.ManagedClusterVersion
	ClusterClaims []clusterv1.ManagedClusterClaim
}

// ComputeInventory computes the inventory of a cluster from its nodes, its ClusterClaims and its
// Kubernetes version (such as v1.37.2). maxCustomClaims caps the custom claims copied (OCM's
// default is clusterv1alpha1.DefaultMaxCustomClusterClaims; 0 copies none). Warnings name every
// input it skipped, and why.
func ComputeInventory(nodes []corev1.Node, claims []clusterv1alpha1.ClusterClaim, kubeVersion string, maxCustomClaims int) (Inventory, []string) {
	var warnings []string
	inv := Inventory{Version: clusterv1.ManagedClusterVersion{Kubernetes: kubeVersion}}
	inv.Capacity, inv.Allocatable = sumResources(nodes)
	inv.ClusterClaims, warnings = copyClaims(claims, max(maxCustomClaims, 0), warnings)
	var gpu []clusterv1.ManagedClusterClaim
	gpu, warnings = gpuClaims(nodes, warnings)
	if room := maxStatusClaims - len(inv.ClusterClaims); len(gpu) > room {
		warnings = append(warnings, fmt.Sprintf("reporting %d of %d GPU claims: status.clusterClaims holds at most %d", room, len(gpu), maxStatusClaims))
		gpu = gpu[:room]
	}
	inv.ClusterClaims = append(inv.ClusterClaims, gpu...)
	return inv, warnings
}

// nodeReady reports whether the node's Ready condition is True.
func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// reportedResource says whether a node resource goes into the cluster's totals: cpu, memory,
// pods and extended resources (a domain outside kubernetes.io, as Kubernetes defines them).
func reportedResource(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods:
		return true
	}
	s := string(name)
	return strings.Contains(s, "/") && !strings.Contains(s, corev1.ResourceDefaultNamespacePrefix) &&
		!strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix)
}

func sumResources(nodes []corev1.Node) (capacity, allocatable clusterv1.ResourceList) {
	add := func(into *clusterv1.ResourceList, from corev1.ResourceList) {
		for name, q := range from {
			if !reportedResource(name) {
				continue
			}
			if *into == nil {
				*into = clusterv1.ResourceList{}
			}
			sum := (*into)[clusterv1.ResourceName(name)]
			sum.Add(q)
			(*into)[clusterv1.ResourceName(name)] = sum
		}
	}
	for i := range nodes {
		if !nodeReady(&nodes[i]) {
			continue
		}
		add(&capacity, nodes[i].Status.Capacity)
		add(&allocatable, nodes[i].Status.Allocatable)
	}
	return capacity, allocatable
}

// gpuClaims synthesizes the GPU claims, sorted by name. GPUs on nodes without the product label
// count in allocatable nvidia.com/gpu but under no model.
func gpuClaims(nodes []corev1.Node, warnings []string) ([]clusterv1.ManagedClusterClaim, []string) {
	counts := map[string]int64{}    // by claim name
	models := map[string]struct{}{} // as labeled
	for i := range nodes {
		n := &nodes[i]
		model := n.Labels[NodeLabelGPUProduct]
		q, ok := n.Status.Allocatable[corev1.ResourceName(clusterv1.ResourceNvidiaGPU)]
		if model == "" || !ok || q.Value() <= 0 || !nodeReady(n) {
			continue
		}
		name := clusterv1.GPUCountClaimName(model)
		if name == "" {
			warnings = append(warnings, fmt.Sprintf("node %s: GPU model %q has no letters or digits; its GPUs are reported under no model", n.Name, model))
			continue
		}
		counts[name] += q.Value()
		models[model] = struct{}{}
	}
	if len(models) == 0 {
		return nil, warnings
	}
	var out []clusterv1.ManagedClusterClaim
	for name, count := range counts {
		out = append(out, clusterv1.ManagedClusterClaim{Name: name, Value: strconv.FormatInt(count, 10)})
	}
	list := slices.Sorted(maps.Keys(models))
	if v := strings.Join(list, ","); utf8.RuneCountInString(v) <= maxClaimValueLength {
		out = append(out, clusterv1.ManagedClusterClaim{Name: clusterv1.GPUModelsClaim, Value: v})
	} else {
		warnings = append(warnings, fmt.Sprintf("claim %s skipped: the %d models take %d characters, over the limit of %d; the per-model count claims are reported",
			clusterv1.GPUModelsClaim, len(list), utf8.RuneCountInString(v), maxClaimValueLength))
	}
	slices.SortFunc(out, func(a, b clusterv1.ManagedClusterClaim) int { return strings.Compare(a.Name, b.Name) })
	return out, warnings
}

// copyClaims picks the spoke's claims to report: reserved ones sorted by name, then custom ones
// sorted by name and capped.
func copyClaims(claims []clusterv1alpha1.ClusterClaim, maxCustom int, warnings []string) ([]clusterv1.ManagedClusterClaim, []string) {
	var reserved, custom []clusterv1.ManagedClusterClaim
	for i := range claims {
		c := &claims[i]
		if _, spokeOnly := c.Labels[clusterv1alpha1.ClusterClaimSpokeOnlyLabel]; spokeOnly {
			continue
		}
		if why := badClaim(c.Name, c.Spec.Value); why != "" {
			warnings = append(warnings, fmt.Sprintf("ClusterClaim %s skipped: %s", c.Name, why))
			continue
		}
		mc := clusterv1.ManagedClusterClaim{Name: c.Name, Value: c.Spec.Value}
		if clusterv1alpha1.IsReservedClusterClaim(c.Name) {
			reserved = append(reserved, mc)
		} else {
			custom = append(custom, mc)
		}
	}
	byName := func(a, b clusterv1.ManagedClusterClaim) int { return strings.Compare(a.Name, b.Name) }
	slices.SortFunc(reserved, byName)
	slices.SortFunc(custom, byName)
	if len(custom) > maxCustom {
		warnings = append(warnings, fmt.Sprintf("reporting %d of %d custom ClusterClaims (the first by name); the cap is %d, so %s and later are left out",
			maxCustom, len(custom), maxCustom, custom[maxCustom].Name))
		custom = custom[:maxCustom]
	}
	return append(reserved, custom...), warnings
}

// badClaim says why the hub would refuse a claim, or "" if it would not. Lengths are in
// characters, as the schema counts them.
func badClaim(name, value string) string {
	switch n, v := utf8.RuneCountInString(name), utf8.RuneCountInString(value); {
	case n == 0 || n > maxClaimNameLength:
		return fmt.Sprintf("its name has %d characters; a claim name has 1 to %d", n, maxClaimNameLength)
	case strings.HasPrefix(name, clusterv1.GPUClaimPrefix):
		return "names under " + clusterv1.GPUClaimPrefix + " belong to the claims the agent synthesizes from its nodes"
	case v == 0 || v > maxClaimValueLength:
		return fmt.Sprintf("spec.value has %d characters; a claim value has 1 to %d", v, maxClaimValueLength)
	}
	return ""
}

// inventoryEqual reports whether the inventory in two statuses is the same, comparing quantities
// by value, not by how they are written.
func inventoryEqual(a, b *clusterv1.ManagedClusterStatus) bool {
	return a.Version == b.Version && slices.Equal(a.ClusterClaims, b.ClusterClaims) &&
		resourceListEqual(a.Capacity, b.Capacity) && resourceListEqual(a.Allocatable, b.Allocatable)
}

func resourceListEqual(a, b clusterv1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		other, ok := b[name]
		if !ok || q.Cmp(other) != 0 {
			return false
		}
	}
	return true
}
