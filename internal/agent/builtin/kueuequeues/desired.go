package kueuequeues

import (
	"sort"

	"github.com/flotilla/flotilla/internal/contract/gpuflavor"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// Names and labels of what the add-on writes. ClusterQueueName and LocalQueueName are the names of
// OCM's Kueue examples, so that manifests written for OCM work unchanged (MultiKueue needs a
// worker's LocalQueue to have the namespace and name of the manager's).
const (
	ClusterQueueName   = gpuflavor.WorkerClusterQueue
	LocalQueueName     = "user-queue"
	LocalQueueNS       = metav1.NamespaceDefault
	CPUOnlyFlavor      = gpuflavor.CPUOnly
	GPUProductLabel    = "nvidia.com/gpu.product"
	GPUResource        = corev1.ResourceName("nvidia.com/gpu")
	maxFlavorsPerGroup = 64 // Kueue's limit on the flavors of a resource group
)

// coveredResources are the resources of the ClusterQueue's one resource group, in order: every
// flavor lists its quotas in this order, as Kueue requires.
var coveredResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, GPUResource}

// Desired is what the add-on keeps on the cluster.
type Desired struct {
	// Flavors are cpu-only, then the GPU models' flavors, by name.
	Flavors      []kueuev1beta2.ResourceFlavor
	ClusterQueue kueuev1beta2.ClusterQueue
	LocalQueue   kueuev1beta2.LocalQueue
	// Dropped are the GPU models left out because a resource group holds at most 64 flavors.
	Dropped []string
}

// group is the nodes of one flavor.
type group struct {
	model string // "" for cpu-only
	sums  map[corev1.ResourceName]*resource.Quantity
}

func newGroup(model string) *group {
	return &group{model: model, sums: map[corev1.ResourceName]*resource.Quantity{
		corev1.ResourceCPU:    resource.NewQuantity(0, resource.DecimalSI),
		corev1.ResourceMemory: resource.NewQuantity(0, resource.BinarySI),
		GPUResource:           resource.NewQuantity(0, resource.DecimalSI),
	}}
}

// Compute returns the objects the nodes call for: a ResourceFlavor per GPU model (the value of a
// node's nvidia.com/gpu.product label), the flavor cpu-only, a ClusterQueue whose quotas are the
// sums of the nodes' allocatable, and the LocalQueue. A node without a model label is a cpu-only
// node, whatever its allocatable says: no flavor could steer a job to it by its GPUs.
func Compute(nodes []*corev1.Node) Desired {
	models := map[string]*group{}
	cpuOnly := newGroup("")
	for _, n := range nodes {
		g := cpuOnly
		if model := n.Labels[GPUProductLabel]; model != "" {
			if models[model] == nil {
				models[model] = newGroup(model)
			}
			g = models[model]
		}
		for _, r := range coveredResources {
			if r == GPUResource && g == cpuOnly {
				continue
			}
			if q, ok := n.Status.Allocatable[r]; ok {
				g.sums[r].Add(q)
			}
		}
	}
	var d Desired
	names := gpuflavor.Names(keys(models))
	var groups []*group
	for model := range models {
		groups = append(groups, models[model])
	}
	sort.Slice(groups, func(i, j int) bool { return names[groups[i].model] < names[groups[j].model] })
	if limit := maxFlavorsPerGroup - 1; len(groups) > limit {
		for _, g := range groups[limit:] {
			d.Dropped = append(d.Dropped, g.model)
		}
		groups = groups[:limit]
	}
	var quotas []kueuev1beta2.FlavorQuotas
	// cpu-only first: Kueue gives a workload the first flavor with room, so a job asking for no
	// GPUs is charged to the nodes without them while there is room there, and a GPU job passes
	// over cpu-only, whose GPU quota is 0.
	for _, g := range append([]*group{cpuOnly}, groups...) {
		name, labels := CPUOnlyFlavor, map[string]string(nil)
		if g != cpuOnly {
			name, labels = names[g.model], map[string]string{GPUProductLabel: g.model}
		}
		d.Flavors = append(d.Flavors, kueuev1beta2.ResourceFlavor{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       kueuev1beta2.ResourceFlavorSpec{NodeLabels: labels},
		})
		fq := kueuev1beta2.FlavorQuotas{Name: kueuev1beta2.ResourceFlavorReference(name)}
		for _, r := range coveredResources {
			fq.Resources = append(fq.Resources, kueuev1beta2.ResourceQuota{Name: r, NominalQuota: *g.sums[r]})
		}
		quotas = append(quotas, fq)
	}
	d.ClusterQueue = kueuev1beta2.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: ClusterQueueName},
		Spec: kueuev1beta2.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{},
			ResourceGroups: []kueuev1beta2.ResourceGroup{{
				CoveredResources: append([]corev1.ResourceName(nil), coveredResources...),
				Flavors:          quotas,
			}},
		},
	}
	d.LocalQueue = kueuev1beta2.LocalQueue{
		ObjectMeta: metav1.ObjectMeta{Namespace: LocalQueueNS, Name: LocalQueueName},
		Spec:       kueuev1beta2.LocalQueueSpec{ClusterQueue: ClusterQueueName},
	}
	return d
}

func keys(m map[string]*group) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
