package kueuequeues

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

const (
	h100 = "NVIDIA-H100-80GB-HBM3"
	a100 = "NVIDIA-A100-SXM4-40GB"
)

// node is a Node with allocatable cpu, memory and (when gpus > 0) GPUs of model.
func node(name, model string, gpus int64, cpu, memory string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
			corev1.ResourcePods: resource.MustParse("110"),
		}}}
	if model != "" {
		n.Labels[GPUProductLabel] = model
	}
	if gpus > 0 {
		n.Status.Allocatable[GPUResource] = *resource.NewQuantity(gpus, resource.DecimalSI)
	}
	return n
}

// quotas is a flavor's row of the ClusterQueue, as "name cpu memory gpus".
func quotas(cq kueuev1beta2.ClusterQueue) []string {
	var out []string
	for _, rg := range cq.Spec.ResourceGroups {
		for _, f := range rg.Flavors {
			row := string(f.Name)
			for _, r := range f.Resources {
				row += " " + string(r.Name) + "=" + r.NominalQuota.String()
			}
			out = append(out, row)
		}
	}
	return out
}

func flavors(d Desired) []string {
	var out []string
	for _, f := range d.Flavors {
		out = append(out, fmt.Sprintf("%s %v", f.Name, f.Spec.NodeLabels))
	}
	return out
}

func TestCompute(t *testing.T) {
	h100Name, a100Name := "gpu-nvidia-h100-80gb-hbm3", "gpu-nvidia-a100-sxm4-40gb"
	for name, tc := range map[string]struct {
		nodes       []*corev1.Node
		wantFlavors []string
		wantQuotas  []string
	}{
		"zero nodes: cpu-only with nothing": {
			wantFlavors: []string{"cpu-only map[]"},
			wantQuotas:  []string{"cpu-only cpu=0 memory=0 nvidia.com/gpu=0"},
		},
		"no GPUs": {
			nodes:       []*corev1.Node{node("c1", "", 0, "16", "64Gi"), node("c2", "", 0, "8", "32Gi")},
			wantFlavors: []string{"cpu-only map[]"},
			wantQuotas:  []string{"cpu-only cpu=24 memory=96Gi nvidia.com/gpu=0"},
		},
		"one model: the sums of its nodes": {
			nodes:       []*corev1.Node{node("h1", h100, 8, "64", "512Gi"), node("h2", h100, 8, "64", "512Gi")},
			wantFlavors: []string{"cpu-only map[]", h100Name + " map[nvidia.com/gpu.product:" + h100 + "]"},
			wantQuotas:  []string{"cpu-only cpu=0 memory=0 nvidia.com/gpu=0", h100Name + " cpu=128 memory=1Ti nvidia.com/gpu=16"},
		},
		"mixed: cpu-only, then models by flavor name": {
			nodes: []*corev1.Node{node("h1", h100, 8, "64", "512Gi"), node("c1", "", 0, "16", "64Gi"),
				node("a1", a100, 4, "32", "256Gi"), node("h2", h100, 8, "64", "512Gi")},
			wantFlavors: []string{"cpu-only map[]", a100Name + " map[nvidia.com/gpu.product:" + a100 + "]", h100Name + " map[nvidia.com/gpu.product:" + h100 + "]"},
			wantQuotas:  []string{"cpu-only cpu=16 memory=64Gi nvidia.com/gpu=0", a100Name + " cpu=32 memory=256Gi nvidia.com/gpu=4", h100Name + " cpu=128 memory=1Ti nvidia.com/gpu=16"},
		},
		"GPUs without a model label count as cpu-only, without their GPUs": {
			nodes:       []*corev1.Node{node("g1", "", 8, "64", "512Gi")},
			wantFlavors: []string{"cpu-only map[]"},
			wantQuotas:  []string{"cpu-only cpu=64 memory=512Gi nvidia.com/gpu=0"},
		},
		"a model that needs sanitizing keeps its label value": {
			nodes:       []*corev1.Node{node("t1", "Tesla_T4..16GB", 1, "8", "32Gi")},
			wantFlavors: []string{"cpu-only map[]", "gpu-tesla-t4-16gb map[nvidia.com/gpu.product:Tesla_T4..16GB]"},
			wantQuotas:  []string{"cpu-only cpu=0 memory=0 nvidia.com/gpu=0", "gpu-tesla-t4-16gb cpu=8 memory=32Gi nvidia.com/gpu=1"},
		},
		"two models that sanitize alike get a flavor each": {
			nodes: []*corev1.Node{node("t1", "Tesla_T4", 1, "8", "32Gi"), node("t2", "tesla.t4", 2, "8", "32Gi")},
			// By name: Tesla_T4's hash (556388fa) sorts before tesla.t4's (c05c177c).
			wantFlavors: []string{"cpu-only map[]", "gpu-tesla-t4-" + hash8("Tesla_T4") + " map[nvidia.com/gpu.product:Tesla_T4]", "gpu-tesla-t4-" + hash8("tesla.t4") + " map[nvidia.com/gpu.product:tesla.t4]"},
			wantQuotas:  []string{"cpu-only cpu=0 memory=0 nvidia.com/gpu=0", "gpu-tesla-t4-" + hash8("Tesla_T4") + " cpu=8 memory=32Gi nvidia.com/gpu=1", "gpu-tesla-t4-" + hash8("tesla.t4") + " cpu=8 memory=32Gi nvidia.com/gpu=2"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			d := Compute(tc.nodes)
			if diff := cmp.Diff(tc.wantFlavors, flavors(d)); diff != "" {
				t.Errorf("flavors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantQuotas, quotas(d.ClusterQueue)); diff != "" {
				t.Errorf("quotas (-want +got):\n%s", diff)
			}
			if d.ClusterQueue.Name != ClusterQueueName || d.ClusterQueue.Spec.NamespaceSelector == nil ||
				len(d.ClusterQueue.Spec.NamespaceSelector.MatchLabels)+len(d.ClusterQueue.Spec.NamespaceSelector.MatchExpressions) != 0 {
				t.Errorf("ClusterQueue %s, namespaceSelector %v; want %s selecting every namespace", d.ClusterQueue.Name,
					d.ClusterQueue.Spec.NamespaceSelector, ClusterQueueName)
			}
			if diff := cmp.Diff([]corev1.ResourceName{"cpu", "memory", "nvidia.com/gpu"}, d.ClusterQueue.Spec.ResourceGroups[0].CoveredResources); diff != "" {
				t.Errorf("covered resources (-want +got):\n%s", diff)
			}
			lq := d.LocalQueue
			if got := fmt.Sprintf("%s/%s -> %s", lq.Namespace, lq.Name, lq.Spec.ClusterQueue); got != "default/user-queue -> cluster-queue" {
				t.Errorf("LocalQueue %s, want default/user-queue -> cluster-queue", got)
			}
		})
	}
}

// hash8 is the first 8 hex digits of the model's SHA-256.
func hash8(model string) string {
	sum := sha256.Sum256([]byte(model))
	return hex.EncodeToString(sum[:4])
}

func TestComputeDropsModelsPastKueuesLimit(t *testing.T) {
	var nodes []*corev1.Node
	for i := range 70 {
		nodes = append(nodes, node(fmt.Sprintf("n%d", i), fmt.Sprintf("model-%02d", i), 1, "1", "1Gi"))
	}
	d := Compute(nodes)
	if got := len(d.ClusterQueue.Spec.ResourceGroups[0].Flavors); got != 64 {
		t.Errorf("%d flavors in the resource group, want Kueue's limit 64", got)
	}
	want := []string{"model-63", "model-64", "model-65", "model-66", "model-67", "model-68", "model-69"}
	if diff := cmp.Diff(want, d.Dropped); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
	if first := d.Flavors[0].Name; first != CPUOnlyFlavor {
		t.Errorf("first flavor %s, want %s", first, CPUOnlyFlavor)
	}
}

func TestNodeStoreIgnoresHeartbeats(t *testing.T) {
	s := newNodeStore()
	n := node("h1", h100, 8, "64", "512Gi")
	if err := s.Replace([]any{n}, "1"); err != nil {
		t.Fatal(err)
	}
	<-s.synced
	drain := func() bool {
		select {
		case <-s.changed:
			return true
		default:
			return false
		}
	}
	if !drain() {
		t.Fatal("the first list did not signal a change")
	}
	for name, tc := range map[string]struct {
		change     func(n *corev1.Node)
		wantSignal bool
	}{
		"a heartbeat (conditions, other labels)": {change: func(n *corev1.Node) {
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
			n.Labels["other"] = "x"
			n.ResourceVersion = "2"
		}},
		"a pod capacity change": {change: func(n *corev1.Node) { n.Status.Allocatable[corev1.ResourcePods] = resource.MustParse("50") }},
		"GPUs changed":          {change: func(n *corev1.Node) { n.Status.Allocatable[GPUResource] = resource.MustParse("7") }, wantSignal: true},
		"model changed":         {change: func(n *corev1.Node) { n.Labels[GPUProductLabel] = a100 }, wantSignal: true},
	} {
		t.Run(name, func(t *testing.T) {
			m := n.DeepCopy()
			tc.change(m)
			if err := s.Update(m); err != nil {
				t.Fatal(err)
			}
			if got := drain(); got != tc.wantSignal {
				t.Errorf("signaled %v, want %v", got, tc.wantSignal)
			}
			if err := s.Update(n); err != nil { // back as it was
				t.Fatal(err)
			}
			drain()
		})
	}
	if err := s.Delete(n); err != nil {
		t.Fatal(err)
	}
	if !drain() || len(s.list()) != 0 {
		t.Errorf("deleting the node: signal or list wrong (%d nodes left)", len(s.list()))
	}
}
