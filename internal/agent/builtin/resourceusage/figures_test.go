package resourceusage

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

func node(name, model string, gpus int64, ready bool) *corev1.Node {
	alloc := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("512Gi"),
	}
	if gpus > 0 {
		alloc["nvidia.com/gpu"] = *resource.NewQuantity(gpus, resource.DecimalSI)
	}
	status := corev1.ConditionTrue
	if !ready {
		status = corev1.ConditionFalse
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Capacity: alloc, Allocatable: alloc,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}},
	}
	if model != "" {
		n.Labels = map[string]string{usagev1alpha1.LabelNvidiaGPUProduct: model}
	}
	return n
}

func pod(nodeName string, phase corev1.PodPhase, requests corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{
		Spec:   corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: requests}}}},
		Status: corev1.PodStatus{Phase: phase},
	}
}

func gpus(n int64) corev1.ResourceList {
	return corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(n, resource.DecimalSI), corev1.ResourceCPU: resource.MustParse("1500m")}
}

// gpuFigures is the nvidia.com/gpu part of the figures, as strings, for short expectations.
type gpuFigures struct {
	Model                             string
	Allocatable, Requested, Free, Max string
	FreeNodes                         map[string]int32
	// Nodes are "name requested/allocatable" per node, in a model's entry only.
	Nodes []string
}

func summarize(resources []usagev1alpha1.ResourceFigures, name string) []gpuFigures {
	var out []gpuFigures
	for _, r := range resources {
		if r.Name != name {
			continue
		}
		g := gpuFigures{Model: r.Model, Allocatable: r.Allocatable.String(), Requested: r.Requested.String(),
			Free: r.Free.String(), Max: r.LargestNodeAllocatable.String()}
		for _, e := range r.FreeNodes {
			if g.FreeNodes == nil {
				g.FreeNodes = map[string]int32{}
			}
			g.FreeNodes[e.Free.String()] = e.Nodes
		}
		for _, n := range r.Nodes {
			g.Nodes = append(g.Nodes, n.Name+" "+n.Requested.String()+"/"+n.Allocatable.String())
		}
		out = append(out, g)
	}
	return out
}

func TestFigures(t *testing.T) {
	const h100, a100 = "NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB"
	tests := []struct {
		name      string
		nodes     []*corev1.Node
		pods      map[string]*corev1.Pod
		resource  string
		wantNodes int32
		want      []gpuFigures
	}{{
		name:      "two models, every GPU free",
		nodes:     []*corev1.Node{node("h-0", h100, 8, true), node("h-1", h100, 8, true), node("a-0", a100, 4, true), node("cpu-0", "", 0, true)},
		resource:  "nvidia.com/gpu",
		wantNodes: 4,
		want: []gpuFigures{
			{Allocatable: "20", Requested: "0", Free: "20", Max: "8", FreeNodes: map[string]int32{"8": 2, "4": 3}},
			{Model: a100, Allocatable: "4", Requested: "0", Free: "4", Max: "4", FreeNodes: map[string]int32{"4": 1}, Nodes: []string{"a-0 0/4"}},
			{Model: h100, Allocatable: "16", Requested: "0", Free: "16", Max: "8", FreeNodes: map[string]int32{"8": 2}, Nodes: []string{"h-0 0/8", "h-1 0/8"}},
		},
	}, {
		name:  "gang fit: 8 free in total, no node with 8",
		nodes: []*corev1.Node{node("h-0", h100, 8, true), node("h-1", h100, 8, true)},
		pods: map[string]*corev1.Pod{
			"a/p0": pod("h-0", corev1.PodRunning, gpus(4)),
			"a/p1": pod("h-1", corev1.PodPending, gpus(4)),
			// finished and unbound pods request nothing
			"a/done":    pod("h-1", corev1.PodSucceeded, gpus(4)),
			"a/failed":  pod("h-1", corev1.PodFailed, gpus(4)),
			"a/pending": pod("", corev1.PodPending, gpus(8)),
		},
		resource:  "nvidia.com/gpu",
		wantNodes: 2,
		want: []gpuFigures{
			{Allocatable: "16", Requested: "8", Free: "8", Max: "8", FreeNodes: map[string]int32{"4": 2}},
			{Model: h100, Allocatable: "16", Requested: "8", Free: "8", Max: "8", FreeNodes: map[string]int32{"4": 2}, Nodes: []string{"h-0 4/8", "h-1 4/8"}},
		},
	}, {
		name:  "NotReady and cordoned nodes do not count; an over-requested node has nothing free",
		nodes: []*corev1.Node{node("h-0", h100, 8, false), cordon(node("h-1", h100, 8, true)), node("h-2", h100, 8, true)},
		pods: map[string]*corev1.Pod{
			"a/p0": pod("h-2", corev1.PodRunning, gpus(6)),
			"a/p1": pod("h-2", corev1.PodRunning, gpus(6)),
		},
		resource:  "nvidia.com/gpu",
		wantNodes: 1,
		want: []gpuFigures{
			{Allocatable: "8", Requested: "12", Free: "0", Max: "8"},
			{Model: h100, Allocatable: "8", Requested: "12", Free: "0", Max: "8", Nodes: []string{"h-2 12/8"}},
		},
	}, {
		name:      "cpu is rounded down to whole cores in the distribution",
		nodes:     []*corev1.Node{node("c-0", "", 0, true)},
		pods:      map[string]*corev1.Pod{"a/p0": pod("c-0", corev1.PodRunning, gpus(0))},
		resource:  "cpu",
		wantNodes: 1,
		want:      []gpuFigures{{Allocatable: "64", Requested: "1500m", Free: "62500m", Max: "64", FreeNodes: map[string]int32{"62": 1}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ta := newTally()
			// Pods first for half the cases: a pod may be seen before its node.
			for k, p := range tt.pods {
				ta.setPod(k, recordOf(p))
			}
			for _, n := range tt.nodes {
				ta.setNode(n)
			}
			nodes, got := ta.figures()
			if nodes != tt.wantNodes {
				t.Errorf("nodes = %d, want %d", nodes, tt.wantNodes)
			}
			if diff := cmp.Diff(tt.want, summarize(got, tt.resource)); diff != "" {
				t.Errorf("figures (-want +got):\n%s", diff)
			}
		})
	}
}

func cordon(n *corev1.Node) *corev1.Node {
	n.Spec.Unschedulable = true
	return n
}

// TestTallyFollowsEvents: pods changing phase, moving and going, and nodes going, leave the
// tally as a fresh count of what is left would.
func TestTallyFollowsEvents(t *testing.T) {
	ta := newTally()
	ta.setNode(node("h-0", "m", 8, true))
	ta.setNode(node("h-1", "m", 8, true))
	ta.setPod("a/p", recordOf(pod("h-0", corev1.PodPending, gpus(8))))
	ta.setPod("a/q", recordOf(pod("h-1", corev1.PodRunning, gpus(2))))
	ta.setPod("a/p", recordOf(pod("h-0", corev1.PodRunning, gpus(8))))
	ta.setPod("a/q", recordOf(pod("h-1", corev1.PodSucceeded, gpus(2))))
	ta.setPod("a/r", recordOf(pod("h-1", corev1.PodRunning, gpus(3))))
	ta.deletePod("a/p")
	ta.deletePod("a/unknown")
	ta.deleteNode("h-1") // its pod a/r still counts against it if it comes back
	ta.setNode(node("h-1", "m", 8, true))

	fresh := newTally()
	fresh.setNode(node("h-0", "m", 8, true))
	fresh.setNode(node("h-1", "m", 8, true))
	fresh.setPod("a/r", recordOf(pod("h-1", corev1.PodRunning, gpus(3))))
	_, want := fresh.figures()
	_, got := ta.figures()
	if diff := cmp.Diff(summarize(want, "nvidia.com/gpu"), summarize(got, "nvidia.com/gpu")); diff != "" {
		t.Errorf("after the events (-fresh count +tally):\n%s", diff)
	}
	ta.deletePod("a/r")
	ta.deleteNode("h-0")
	ta.deleteNode("h-1")
	if len(ta.nodes) != 0 || len(ta.pods) != 0 {
		t.Errorf("after everything went: %d nodes and %d pods kept, want none", len(ta.nodes), len(ta.pods))
	}
}

// TestFreeNodesStaysShort: 5,000 nodes with all different amounts free give at most 64 entries,
// each rounded down.
func TestFreeNodesStaysShort(t *testing.T) {
	ta := newTally()
	for i := range 5000 {
		n := node("n-"+resource.NewQuantity(int64(i), resource.DecimalSI).String(), "", 0, true)
		mem := resource.NewQuantity(int64(i+1)<<30, resource.BinarySI)
		n.Status.Allocatable = corev1.ResourceList{corev1.ResourceMemory: *mem}
		ta.setNode(n)
	}
	_, got := ta.figures()
	mem := (&usagev1alpha1.ResourceUsageStatus{Resources: got}).Figures("memory", "")
	if mem == nil || len(mem.FreeNodes) == 0 || len(mem.FreeNodes) > maxFreeNodes {
		t.Fatalf("memory figures %+v: want 1..%d FreeNodes entries", mem, maxFreeNodes)
	}
	if n := mem.NodesWithAtLeast(resource.MustParse("1Gi")); n != 5000 {
		t.Errorf("nodes with at least 1Gi free = %d, want 5000", n)
	}
	top := mem.MostFreeOnANode()
	if top.Cmp(resource.MustParse("5000Gi")) > 0 || top.Cmp(resource.MustParse("4000Gi")) < 0 {
		t.Errorf("most free on a node = %s, want 4000Gi..5000Gi (rounded down from 5000Gi)", top.String())
	}
	for i := 1; i < len(mem.FreeNodes); i++ {
		if mem.FreeNodes[i].Free.Cmp(mem.FreeNodes[i-1].Free) >= 0 || mem.FreeNodes[i].Nodes <= mem.FreeNodes[i-1].Nodes {
			t.Fatalf("FreeNodes not strictly descending in amount and ascending in nodes at %d: %+v", i, mem.FreeNodes)
		}
	}
}

// BenchmarkTallyMemory reports the tally's heap per pod of a cluster of 5,000 nodes and 50,000
// pods (what the agent keeps instead of the pods), and the time to compute the figures once.
func BenchmarkTallyMemory(b *testing.B) {
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		ta := newTally()
		for i := range 5000 {
			ta.setNode(node(fmt.Sprintf("node-%05d", i), "NVIDIA-H100-80GB-HBM3", 8, true))
		}
		for i := range 50000 {
			p, _ := trimPod(pod(fmt.Sprintf("node-%05d", i%5000), corev1.PodRunning, gpus(0)))
			ta.setPod(fmt.Sprintf("work/p-%06d", i), p.(*podRecord))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/50000, "heap-B/pod")
		start := time.Now()
		ta.figures()
		b.ReportMetric(float64(time.Since(start).Microseconds()), "µs/figures")
		runtime.KeepAlive(ta)
	}
}

func TestModelNodesStayWithinTheAPILimit(t *testing.T) {
	ta := newTally()
	for i := range maxNodes + 3 {
		ta.setNode(node(fmt.Sprintf("g-%05d", i), "NVIDIA-H100-80GB-HBM3", 8, true))
	}
	_, got := ta.figures()
	f := (&usagev1alpha1.ResourceUsageStatus{Resources: got}).Figures("nvidia.com/gpu", "NVIDIA-H100-80GB-HBM3")
	if f == nil {
		t.Fatal("no figures for the model")
	}
	if len(f.Nodes) != maxNodes {
		t.Fatalf("model figures have %d nodes, want the first %d of %d", len(f.Nodes), maxNodes, maxNodes+3)
	}
	if f.Nodes[0].Name != "g-00000" || f.Nodes[maxNodes-1].Name != fmt.Sprintf("g-%05d", maxNodes-1) {
		t.Errorf("nodes run %s..%s, want the first by name", f.Nodes[0].Name, f.Nodes[maxNodes-1].Name)
	}
	if all := (&usagev1alpha1.ResourceUsageStatus{Resources: got}).Figures("nvidia.com/gpu", ""); len(all.Nodes) != 0 {
		t.Errorf("the every-node entry has %d nodes, want none (per-node figures are per model)", len(all.Nodes))
	}
}
