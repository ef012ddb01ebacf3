package localk8s

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// Labels and resources that GPU nodes carry on real clusters (NVIDIA's device plugin and GPU
// feature discovery); Flotilla reads GPU inventory from them.
const (
	GPUResource     = corev1.ResourceName("nvidia.com/gpu")
	GPUProductLabel = "nvidia.com/gpu.product"
	GPUCountLabel   = "nvidia.com/gpu.count"
)

// NodePool describes identical simulated nodes.
type NodePool struct {
	// Name prefixes the node names: <Name>-0, <Name>-1, ...
	Name  string
	Count int
	// GPUModel is the value of nvidia.com/gpu.product, for example "NVIDIA-H100-80GB-HBM3";
	// empty for CPU-only nodes.
	GPUModel string
	// GPUs is each node's nvidia.com/gpu capacity.
	GPUs   int
	CPU    resource.Quantity
	Memory resource.Quantity
	// Pods is each node's pod capacity; 110 when zero, as kubelet's default.
	Pods   int
	Labels map[string]string
}

// Nodes builds the Node objects of a pool. kwok simulates them because they carry its annotation.
func (p NodePool) Nodes() []*corev1.Node {
	pods := p.Pods
	if pods == 0 {
		pods = 110
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    p.CPU,
		corev1.ResourceMemory: p.Memory,
		corev1.ResourcePods:   *resource.NewQuantity(int64(pods), resource.DecimalSI),
	}
	labels := map[string]string{"type": "kwok"}
	if p.GPUs > 0 {
		capacity[GPUResource] = *resource.NewQuantity(int64(p.GPUs), resource.DecimalSI)
		labels[GPUCountLabel] = strconv.Itoa(p.GPUs)
		if p.GPUModel != "" {
			labels[GPUProductLabel] = p.GPUModel
		}
	}
	maps.Copy(labels, p.Labels)
	nodes := make([]*corev1.Node, p.Count)
	for i := range nodes {
		name := fmt.Sprintf("%s-%d", p.Name, i)
		l := maps.Clone(labels)
		l[corev1.LabelHostname] = name
		nodes[i] = &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Labels:      l,
				Annotations: map[string]string{KwokNodeAnnotation: "fake"},
			},
			Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity.DeepCopy()},
		}
	}
	return nodes
}

// CreateNodes creates the pool's nodes; nodes that exist already are left as they are.
func CreateNodes(ctx context.Context, cs kubernetes.Interface, pool NodePool) error {
	for _, n := range pool.Nodes() {
		if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %s: %w", n.Name, err)
		}
	}
	return nil
}

// NodeSchedulable reports whether a node is Ready, without taints and not cordoned.
func NodeSchedulable(n *corev1.Node) bool {
	if len(n.Spec.Taints) > 0 || n.Spec.Unschedulable {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// WaitNodesSchedulable waits until every node of the cluster cs reaches is Ready and schedulable
// (kwok marks simulated nodes Ready; kube-controller-manager then lifts the not-ready taint). On
// timeout the error says how many are and which are not.
func WaitNodesSchedulable(ctx context.Context, cs kubernetes.Interface, timeout time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		var notReady []string
		for i := range nodes.Items {
			if !NodeSchedulable(&nodes.Items[i]) {
				notReady = append(notReady, nodes.Items[i].Name)
			}
		}
		last = fmt.Sprintf("%d of %d nodes Ready; waiting for %s", len(nodes.Items)-len(notReady), len(nodes.Items), strings.Join(notReady, ", "))
		return len(notReady) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("nodes did not become Ready within %s (%s)", timeout, last)
	}
	return nil
}
