package registration

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
)

const (
	a100 = "NVIDIA-A100-SXM4-80GB"
	h100 = "NVIDIA-H100-80GB-HBM3"
)

// nodeWrapper builds test nodes: makeNode("n").GPUs(a100, 8).Obj() is a Ready node with 32 CPUs,
// 256Gi of memory, 110 pods and eight A100s.
type nodeWrapper struct{ corev1.Node }

func makeNode(name string) *nodeWrapper {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return &nodeWrapper{corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}},
		Status: corev1.NodeStatus{
			Capacity: res, Allocatable: res.DeepCopy(),
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}}
}

// GPUs gives the node n GPUs of a model; an empty model leaves the product label off.
func (w *nodeWrapper) GPUs(model string, n int64) *nodeWrapper {
	if model != "" {
		w.Labels[NodeLabelGPUProduct] = model
	}
	return w.Resource("nvidia.com/gpu", fmt.Sprint(n))
}

// Resource sets a resource's capacity and allocatable.
func (w *nodeWrapper) Resource(name, q string) *nodeWrapper {
	w.Status.Capacity[corev1.ResourceName(name)] = resource.MustParse(q)
	w.Status.Allocatable[corev1.ResourceName(name)] = resource.MustParse(q)
	return w
}

// Allocatable overrides allocatable only.
func (w *nodeWrapper) Allocatable(name, q string) *nodeWrapper {
	w.Status.Allocatable[corev1.ResourceName(name)] = resource.MustParse(q)
	return w
}

func (w *nodeWrapper) NotReady() *nodeWrapper {
	w.Status.Conditions[0].Status = corev1.ConditionFalse
	return w
}

func (w *nodeWrapper) NoReadyCondition() *nodeWrapper {
	w.Status.Conditions = nil
	return w
}

func (w *nodeWrapper) Obj() corev1.Node { return w.Node }

func nodes(ws ...*nodeWrapper) []corev1.Node {
	out := make([]corev1.Node, len(ws))
	for i, w := range ws {
		out[i] = w.Obj()
	}
	return out
}

func claim(name, value string) clusterv1alpha1.ClusterClaim {
	return clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterClaimSpec{Value: value}}
}

func spokeOnly(c clusterv1alpha1.ClusterClaim) clusterv1alpha1.ClusterClaim {
	c.Labels = map[string]string{clusterv1alpha1.ClusterClaimSpokeOnlyLabel: ""}
	return c
}

func res(pairs ...string) clusterv1.ResourceList {
	out := clusterv1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[clusterv1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func mcc(pairs ...string) []clusterv1.ManagedClusterClaim {
	var out []clusterv1.ManagedClusterClaim
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, clusterv1.ManagedClusterClaim{Name: pairs[i], Value: pairs[i+1]})
	}
	return out
}

// quantityByValue compares quantities as numbers: 1Ti equals 1024Gi.
var quantityByValue = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func TestComputeInventory(t *testing.T) {
	const version = "v1.37.2"
	var custom25 []clusterv1alpha1.ClusterClaim
	var want20 []string
	for i := 25; i >= 1; i-- { // in reverse, to show they are sorted before the cap applies
		custom25 = append(custom25, claim(fmt.Sprintf("custom-%02d.example.com", i), fmt.Sprint(i)))
	}
	for i := 1; i <= 20; i++ {
		want20 = append(want20, fmt.Sprintf("custom-%02d.example.com", i), fmt.Sprint(i))
	}
	long := strings.Repeat("x", 1025)

	cases := map[string]struct {
		nodes        []corev1.Node
		claims       []clusterv1alpha1.ClusterClaim
		maxCustom    int
		want         Inventory
		wantWarnings []string
	}{
		"an empty cluster reports its version only": {
			want: Inventory{Version: clusterv1.ManagedClusterVersion{Kubernetes: version}},
		},
		"GPU nodes of two models are summed and counted by model": {
			nodes: nodes(
				makeNode("a100-0").GPUs(a100, 8),
				makeNode("a100-1").GPUs(a100, 8),
				makeNode("h100-0").GPUs(h100, 8).Allocatable("nvidia.com/gpu", "7"), // one GPU unhealthy
				makeNode("cpu-0"),
			),
			want: Inventory{
				Capacity:    res("cpu", "128", "memory", "1Ti", "pods", "440", "nvidia.com/gpu", "24"),
				Allocatable: res("cpu", "128", "memory", "1Ti", "pods", "440", "nvidia.com/gpu", "23"),
				Version:     clusterv1.ManagedClusterVersion{Kubernetes: version},
				ClusterClaims: mcc(
					"gpu.flotilla.io/count.nvidia-a100-sxm4-80gb", "16",
					"gpu.flotilla.io/count.nvidia-h100-80gb-hbm3", "7",
					clusterv1.GPUModelsClaim, a100+","+h100,
				),
			},
		},
		"NotReady nodes and nodes without a Ready condition are left out": {
			nodes: nodes(
				makeNode("ready").GPUs(a100, 8),
				makeNode("not-ready").GPUs(a100, 8).NotReady(),
				makeNode("h100-new").GPUs(h100, 8).NoReadyCondition(),
			),
			want: Inventory{
				Capacity:      res("cpu", "32", "memory", "256Gi", "pods", "110", "nvidia.com/gpu", "8"),
				Allocatable:   res("cpu", "32", "memory", "256Gi", "pods", "110", "nvidia.com/gpu", "8"),
				Version:       clusterv1.ManagedClusterVersion{Kubernetes: version},
				ClusterClaims: mcc("gpu.flotilla.io/count.nvidia-a100-sxm4-80gb", "8", clusterv1.GPUModelsClaim, a100),
			},
		},
		"extended resources are summed; ephemeral storage and hugepages are not": {
			nodes: nodes(
				makeNode("a").Resource("example.com/fpga", "2").Resource("ephemeral-storage", "100Gi").Resource("hugepages-2Mi", "1Gi"),
				makeNode("b").Resource("example.com/fpga", "1").Resource("kubernetes.io/something", "1"),
			),
			want: Inventory{
				Capacity:    res("cpu", "64", "memory", "512Gi", "pods", "220", "example.com/fpga", "3"),
				Allocatable: res("cpu", "64", "memory", "512Gi", "pods", "220", "example.com/fpga", "3"),
				Version:     clusterv1.ManagedClusterVersion{Kubernetes: version},
			},
		},
		"GPUs without a product label count in the totals but under no model": {
			nodes: nodes(makeNode("gpu-0").GPUs("", 4), makeNode("gpu-1").GPUs(a100, 0)),
			want: Inventory{
				Capacity:    res("cpu", "64", "memory", "512Gi", "pods", "220", "nvidia.com/gpu", "4"),
				Allocatable: res("cpu", "64", "memory", "512Gi", "pods", "220", "nvidia.com/gpu", "4"),
				Version:     clusterv1.ManagedClusterVersion{Kubernetes: version},
			},
		},
		"reserved claims first, then custom ones, both by name; spoke-only claims stay home": {
			claims: []clusterv1alpha1.ClusterClaim{
				claim("region.open-cluster-management.io", "us-east-1"),
				claim(clusterv1alpha1.ClusterClaimProduct, "EKS"),
				spokeOnly(claim("secret-sauce.example.com", "ketchup")),
				claim("accelerator.example.com", "gpu"),
				claim(clusterv1alpha1.ClusterClaimID, "0b7e3c9a"),
				spokeOnly(claim(clusterv1alpha1.ClusterClaimPlatform, "AWS")),
			},
			maxCustom: clusterv1alpha1.DefaultMaxCustomClusterClaims,
			want: Inventory{
				Version: clusterv1.ManagedClusterVersion{Kubernetes: version},
				ClusterClaims: mcc(
					clusterv1alpha1.ClusterClaimID, "0b7e3c9a",
					clusterv1alpha1.ClusterClaimProduct, "EKS",
					"accelerator.example.com", "gpu",
					"region.open-cluster-management.io", "us-east-1",
				),
			},
		},
		"25 custom claims are cut to the first 20 by name; reserved and GPU claims are not counted": {
			nodes:     nodes(makeNode("a100-0").GPUs(a100, 8)),
			claims:    append([]clusterv1alpha1.ClusterClaim{claim(clusterv1alpha1.ClusterClaimKubeVersion, version)}, custom25...),
			maxCustom: clusterv1alpha1.DefaultMaxCustomClusterClaims,
			want: Inventory{
				Capacity:    res("cpu", "32", "memory", "256Gi", "pods", "110", "nvidia.com/gpu", "8"),
				Allocatable: res("cpu", "32", "memory", "256Gi", "pods", "110", "nvidia.com/gpu", "8"),
				Version:     clusterv1.ManagedClusterVersion{Kubernetes: version},
				ClusterClaims: append(append(mcc(clusterv1alpha1.ClusterClaimKubeVersion, version), mcc(want20...)...),
					mcc("gpu.flotilla.io/count.nvidia-a100-sxm4-80gb", "8", clusterv1.GPUModelsClaim, a100)...),
			},
			wantWarnings: []string{"reporting 20 of 25 custom ClusterClaims (the first by name); the cap is 20, so custom-21.example.com and later are left out"},
		},
		"claims the hub would refuse are skipped with a warning, and the rest are reported": {
			claims: []clusterv1alpha1.ClusterClaim{
				claim("too-long.example.com", long),
				claim("empty.example.com", ""),
				claim(clusterv1alpha1.ClusterClaimID, long),
				claim("gpu.flotilla.io/models", "H200"), // impossible as an object name, but not here
				claim("fine.example.com", "ok"),
				claim("unicode.example.com", strings.Repeat("é", 1024)), // 1024 characters, 2048 bytes
			},
			maxCustom: clusterv1alpha1.DefaultMaxCustomClusterClaims,
			want: Inventory{
				Version:       clusterv1.ManagedClusterVersion{Kubernetes: version},
				ClusterClaims: mcc("fine.example.com", "ok", "unicode.example.com", strings.Repeat("é", 1024)),
			},
			wantWarnings: []string{
				"ClusterClaim too-long.example.com skipped: spec.value has 1025 characters; a claim value has 1 to 1024",
				"ClusterClaim empty.example.com skipped: spec.value has 0 characters; a claim value has 1 to 1024",
				"ClusterClaim id.k8s.io skipped: spec.value has 1025 characters; a claim value has 1 to 1024",
				"ClusterClaim gpu.flotilla.io/models skipped: names under gpu.flotilla.io/ belong to the claims the agent synthesizes from its nodes",
			},
		},
		"a cap of 0 copies reserved claims only": {
			claims:    []clusterv1alpha1.ClusterClaim{claim("a.example.com", "1"), claim(clusterv1alpha1.ClusterClaimID, "x")},
			maxCustom: 0,
			want: Inventory{
				Version:       clusterv1.ManagedClusterVersion{Kubernetes: version},
				ClusterClaims: mcc(clusterv1alpha1.ClusterClaimID, "x"),
			},
			wantWarnings: []string{"reporting 0 of 1 custom ClusterClaims (the first by name); the cap is 0, so a.example.com and later are left out"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, gotWarnings := ComputeInventory(tc.nodes, tc.claims, version, tc.maxCustom)
			if diff := cmp.Diff(tc.want, got, quantityByValue); diff != "" {
				t.Errorf("inventory (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWarnings, gotWarnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGPUCountClaimName(t *testing.T) {
	longModel := "NVIDIA-" + strings.Repeat("X", 60)
	cases := map[string]struct {
		model string
		want  string
	}{
		"a product label is lowercased":         {model: a100, want: "gpu.flotilla.io/count.nvidia-a100-sxm4-80gb"},
		"characters a label key lacks become -": {model: "Tesla T4 (PCIe)", want: "gpu.flotilla.io/count.tesla-t4--pcie"},
		"nothing usable gives no name":          {model: "@@@", want: ""},
		"a long model is cut and hashed":        {model: longModel, want: "gpu.flotilla.io/count.nvidia-" + strings.Repeat("x", 41) + "-e05212f9"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := clusterv1.GPUCountClaimName(tc.model)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("clusterv1.GPUCountClaimName(%q) (-want +got):\n%s", tc.model, diff)
			}
			if _, after, _ := strings.Cut(got, "/"); len(after) > maxLabelNameLength {
				t.Errorf("clusterv1.GPUCountClaimName(%q) = %q: %d characters after the slash, over a label key's %d", tc.model, got, len(after), maxLabelNameLength)
			}
		})
	}
	if a, b := clusterv1.GPUCountClaimName(longModel+"-A"), clusterv1.GPUCountClaimName(longModel+"-B"); a == b {
		t.Errorf("two long models that differ after the cut share the claim name %s", a)
	}
}

func TestInventoryEqual(t *testing.T) {
	base := clusterv1.ManagedClusterStatus{
		Capacity:      res("memory", "1Ti", "nvidia.com/gpu", "16"),
		Allocatable:   res("memory", "1Ti"),
		Version:       clusterv1.ManagedClusterVersion{Kubernetes: "v1.37.2"},
		ClusterClaims: mcc("a", "1"),
	}
	cases := map[string]struct {
		change func(s *clusterv1.ManagedClusterStatus)
		want   bool
	}{
		"the same":                       {change: func(*clusterv1.ManagedClusterStatus) {}, want: true},
		"a quantity written another way": {change: func(s *clusterv1.ManagedClusterStatus) { s.Capacity["memory"] = resource.MustParse("1024Gi") }, want: true},
		"conditions are not inventory":   {change: func(s *clusterv1.ManagedClusterStatus) { s.Conditions = []metav1.Condition{{Type: "X"}} }, want: true},
		"allocatable gone":               {change: func(s *clusterv1.ManagedClusterStatus) { s.Allocatable = nil }, want: false},
		"a quantity changed":             {change: func(s *clusterv1.ManagedClusterStatus) { s.Capacity["nvidia.com/gpu"] = resource.MustParse("24") }, want: false},
		"a resource gone":                {change: func(s *clusterv1.ManagedClusterStatus) { delete(s.Capacity, "nvidia.com/gpu") }, want: false},
		"a claim's value changed":        {change: func(s *clusterv1.ManagedClusterStatus) { s.ClusterClaims = mcc("a", "2") }, want: false},
		"the version changed":            {change: func(s *clusterv1.ManagedClusterStatus) { s.Version.Kubernetes = "v1.37.3" }, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a, b := base.DeepCopy(), base.DeepCopy()
			tc.change(b)
			if got := inventoryEqual(a, b); got != tc.want {
				t.Errorf("inventoryEqual = %v, want %v", got, tc.want)
			}
		})
	}
	if !inventoryEqual(&clusterv1.ManagedClusterStatus{Capacity: clusterv1.ResourceList{}}, &clusterv1.ManagedClusterStatus{}) {
		t.Error("an empty resource list and none differ; a cluster with no Ready nodes would write its status every period")
	}
}

// TestClusterClaimsWithoutTheCRD: a spoke that does not serve ClusterClaims answers 404, as text
// or as a Status; the agent takes that as no claims and reports the rest.
func TestClusterClaimsWithoutTheCRD(t *testing.T) {
	cases := map[string]struct {
		contentType string
		code        int
		body        string
		want        []clusterv1alpha1.ClusterClaim
		wantErr     bool
	}{
		"404 as text": {contentType: "text/plain", code: http.StatusNotFound, body: "404 page not found"},
		"404 as a Status": {contentType: "application/json", code: http.StatusNotFound,
			body: `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`},
		"a list": {contentType: "application/json", code: http.StatusOK,
			body: `{"kind":"ClusterClaimList","apiVersion":"cluster.open-cluster-management.io/v1alpha1","items":[{"metadata":{"name":"id.k8s.io"},"spec":{"value":"x"}}]}`,
			want: []clusterv1alpha1.ClusterClaim{{ObjectMeta: metav1.ObjectMeta{Name: "id.k8s.io"}, Spec: clusterv1alpha1.ClusterClaimSpec{Value: "x"}}}},
		"a server error is an error": {contentType: "text/plain", code: http.StatusInternalServerError, body: "boom", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != clusterClaimsPath {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", tc.contentType)
				w.WriteHeader(tc.code)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			got, err := (&Agent{spoke: cs}).clusterClaims(context.Background())
			if (err != nil) != tc.wantErr {
				t.Fatalf("clusterClaims error = %v, want error: %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("claims (-want +got):\n%s", diff)
			}
		})
	}
}
