package predicate

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
)

type fakeHandle struct {
	placement *clusterv1beta1.Placement
	scores    map[string]*clusterv1alpha1.AddOnPlacementScore
	usages    map[string]*usagev1alpha1.ResourceUsage
	now       time.Time
}

func (h *fakeHandle) Placement() *clusterv1beta1.Placement { return h.placement }
func (h *fakeHandle) Now() time.Time                       { return h.now }
func (h *fakeHandle) ResourceUsage(cluster string) *usagev1alpha1.ResourceUsage {
	return h.usages[cluster]
}
func (h *fakeHandle) InCurrentDecisions(string) bool      { return false }
func (h *fakeHandle) OtherDecisionCounts() map[string]int { return nil }
func (h *fakeHandle) CurrentDecisions() []clusterv1beta1.ClusterDecision {
	return nil
}
func (h *fakeHandle) ClusterObject(c *clusterv1.ManagedCluster) (map[string]any, error) {
	return runtime.DefaultUnstructuredConverter.ToUnstructured(c)
}
func (h *fakeHandle) AddOnPlacementScore(cluster, name string) *clusterv1alpha1.AddOnPlacementScore {
	return h.scores[cluster+"/"+name]
}

func celPredicate(exprs ...string) clusterv1beta1.ClusterPredicate {
	return clusterv1beta1.ClusterPredicate{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
		CelSelector: clusterv1beta1.ClusterCelSelector{CelExpressions: exprs}}}
}

func TestFilter(t *testing.T) {
	cluster := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", Labels: map[string]string{"region": "east"}}}
	cluster.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "platform", Value: "AWS"}}
	scores := map[string]*clusterv1alpha1.AddOnPlacementScore{"c1/gpu": {Status: clusterv1alpha1.AddOnPlacementScoreStatus{
		Scores: []clusterv1alpha1.AddOnPlacementScoreItem{{Name: "free", Value: 70}}}}}
	// 100 x 100 x 100 comprehension steps: far beyond CostLimit.
	list := "[" + strings.TrimSuffix(strings.Repeat("1,", 100), ",") + "]"
	expensive := fmt.Sprintf("%s.all(a, %s.all(b, %s.all(c, a + b + c > 0)))", list, list, list)
	labels := func(m map[string]string) clusterv1beta1.ClusterPredicate {
		return clusterv1beta1.ClusterPredicate{RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: m}}}
	}
	claims := func(op metav1.LabelSelectorOperator, key string, values ...string) clusterv1beta1.ClusterPredicate {
		return clusterv1beta1.ClusterPredicate{RequiredClusterSelector: clusterv1beta1.ClusterSelector{ClaimSelector: clusterv1beta1.ClusterClaimSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: values}}}}}
	}
	cases := map[string]struct {
		predicates []clusterv1beta1.ClusterPredicate
		want       string // "" means kept
	}{
		"no predicates":        {nil, ""},
		"label match":          {[]clusterv1beta1.ClusterPredicate{labels(map[string]string{"region": "east"})}, ""},
		"label mismatch":       {[]clusterv1beta1.ClusterPredicate{labels(map[string]string{"region": "west"})}, "predicates[0]: label region=west not met (has region=east)"},
		"ORed: second wins":    {[]clusterv1beta1.ClusterPredicate{labels(map[string]string{"region": "west"}), celPredicate("true")}, ""},
		"claim":                {[]clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "platform", Operator: metav1.LabelSelectorOpIn, Values: []string{"GCP"}}}}}}}, "predicates[0]: claim platform in (GCP) not met (has platform=AWS)"},
		"claim in":             {[]clusterv1beta1.ClusterPredicate{claims(metav1.LabelSelectorOpIn, "platform", "AWS")}, ""},
		"claim not in":         {[]clusterv1beta1.ClusterPredicate{claims(metav1.LabelSelectorOpNotIn, "platform", "AWS")}, "predicates[0]: claim platform notin (AWS) not met (has platform=AWS)"},
		"claim not in, absent": {[]clusterv1beta1.ClusterPredicate{claims(metav1.LabelSelectorOpNotIn, "region", "x")}, ""},
		"claim exists":         {[]clusterv1beta1.ClusterPredicate{claims(metav1.LabelSelectorOpExists, "platform")}, ""},
		"claim exists, absent": {[]clusterv1beta1.ClusterPredicate{claims(metav1.LabelSelectorOpExists, "region")}, "predicates[0]: claim region not met (no region)"},
		"claim does not exist": {[]clusterv1beta1.ClusterPredicate{claims(metav1.LabelSelectorOpDoesNotExist, "platform")}, "predicates[0]: claim !platform not met (has platform=AWS)"},
		"cel scores":           {[]clusterv1beta1.ClusterPredicate{celPredicate(`managedCluster.scores("gpu")[0].value == 70`)}, ""},
		"cel claims":           {[]clusterv1beta1.ClusterPredicate{celPredicate(`managedCluster.status.clusterClaims.exists(c, c.name == "platform" && c.value == "AWS")`)}, ""},
		"cel missing scores":   {[]clusterv1beta1.ClusterPredicate{celPredicate(`managedCluster.scores("cpu").size() == 0`)}, `evaluation error: no AddOnPlacementScore c1/cpu`},
		"cel false":            {[]clusterv1beta1.ClusterPredicate{celPredicate(`true`, `false`)}, `predicates[0]: celExpressions[1] "false" is false`},
		"cel extensions":       {[]clusterv1beta1.ClusterPredicate{celPredicate(`managedCluster.metadata.name.upperAscii() == "C1"`, `math.greatest(1, 2) == 2`, `sets.contains([1, 2], [2])`)}, ""},
		"cel cost limit":       {[]clusterv1beta1.ClusterPredicate{celPredicate(expensive)}, "actual cost limit exceeded"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := &fakeHandle{placement: &clusterv1beta1.Placement{Spec: clusterv1beta1.PlacementSpec{Predicates: tc.predicates}}, scores: scores}
			pl, err := New(h, framework.Args{})
			if err != nil {
				t.Fatalf("New() error = %v", err)
			}
			st := pl.(framework.FilterPlugin).Filter(cluster)
			switch {
			case tc.want == "" && st != nil:
				t.Errorf("Filter() = %+v, want the cluster kept", st)
			case tc.want != "" && (st == nil || st.Code != framework.Unschedulable || !strings.Contains(st.Message, tc.want)):
				t.Errorf("Filter() = %+v, want Unschedulable with %q", st, tc.want)
			}
		})
	}
}

// PerCluster has no snapshot to memoize over: it computes nothing ahead, and plugins fall back
// to computing each cluster's value.
func (h *fakeHandle) PerCluster(string, func(*clusterv1.ManagedCluster) int64) map[*clusterv1.ManagedCluster]int64 {
	return nil
}

func TestCELGPUFunctions(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)
	q := resource.MustParse
	valid := func(d time.Duration) usagev1alpha1.ResourceUsageStatus {
		observed, until := metav1.NewTime(now.Add(-time.Minute)), metav1.NewTime(now.Add(d))
		return usagev1alpha1.ResourceUsageStatus{ObservedTime: &observed, ValidUntil: &until}
	}
	// c1: 16 free A100 on three nodes (8, 4, 4) and 64Gi memory free on two nodes.
	c1 := valid(time.Minute)
	c1.Resources = []usagev1alpha1.ResourceFigures{
		{Name: "memory", Capacity: q("256Gi"), Allocatable: q("250Gi"), Free: q("96Gi"),
			FreeNodes: []usagev1alpha1.NodesWithFree{{Free: q("64Gi"), Nodes: 1}, {Free: q("32Gi"), Nodes: 2}}},
		{Name: "nvidia.com/gpu", Capacity: q("24"), Allocatable: q("24"), Free: q("16"),
			FreeNodes: []usagev1alpha1.NodesWithFree{{Free: q("8"), Nodes: 1}, {Free: q("4"), Nodes: 3}}},
		{Name: "nvidia.com/gpu", Model: "NVIDIA-A100", Capacity: q("24"), Allocatable: q("24"), Free: q("16"),
			FreeNodes: []usagev1alpha1.NodesWithFree{{Free: q("8"), Nodes: 1}, {Free: q("4"), Nodes: 3}}},
	}
	usages := map[string]*usagev1alpha1.ResourceUsage{
		"c1":      {Status: c1},
		"expired": {Status: valid(-time.Second)},
	}
	cases := map[string]struct {
		cluster string
		expr    string
		want    string // "" keeps the cluster, else part of the reason it is filtered
	}{
		"freeGPUs of the model":          {cluster: "c1", expr: `managedCluster.freeGPUs("NVIDIA-A100") == 16`},
		"freeGPUs of any model":          {cluster: "c1", expr: `managedCluster.freeGPUs("") == 16`},
		"freeGPUs of a model not there":  {cluster: "c1", expr: `managedCluster.freeGPUs("NVIDIA-H100") == 0`},
		"nodesWithFreeGPUs":              {cluster: "c1", expr: `managedCluster.nodesWithFreeGPUs("NVIDIA-A100", 4) == 3 && managedCluster.nodesWithFreeGPUs("NVIDIA-A100", 5) == 1`},
		"gpuFit: one node with 8":        {cluster: "c1", expr: `managedCluster.gpuFit("NVIDIA-A100", 8, 1)`},
		"gpuFit: gang, total not enough": {cluster: "c1", expr: `managedCluster.gpuFit("NVIDIA-A100", 8, 2)`, want: `is false`},
		"nodesWithFree memory":           {cluster: "c1", expr: `managedCluster.nodesWithFree("memory", "", "40Gi") == 1`},
		"nodesWithFree bad amount": {cluster: "c1", expr: `managedCluster.nodesWithFree("memory", "", "lots") > 0`,
			want: `evaluation error: nodesWithFree: amount "lots" is not a quantity`},
		"missing figures are an error": {cluster: "c2", expr: `managedCluster.freeGPUs("") >= 0`,
			want: "evaluation error: no ResourceUsage c2/resource-usage: enable the resource-usage add-on: `flotilla addon enable resource-usage --clusters c2`"},
		"expired figures are an error": {cluster: "expired", expr: `!managedCluster.gpuFit("", 1, 1)`,
			want: "evaluation error: ResourceUsage expired/resource-usage expired at 2026-01-01T00:00:59Z"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := &fakeHandle{placement: &clusterv1beta1.Placement{Spec: clusterv1beta1.PlacementSpec{
				Predicates: []clusterv1beta1.ClusterPredicate{celPredicate(tc.expr)}}}, usages: usages, now: now}
			pl, err := New(h, framework.Args{})
			if err != nil {
				t.Fatalf("New() error = %v", err)
			}
			st := pl.(framework.FilterPlugin).Filter(&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: tc.cluster}})
			switch {
			case tc.want == "" && st != nil:
				t.Errorf("Filter() = %+v, want the cluster kept", st)
			case tc.want != "" && (st == nil || st.Code != framework.Unschedulable || !strings.Contains(st.Message, tc.want)):
				t.Errorf("Filter() = %+v, want Unschedulable with %q", st, tc.want)
			}
		})
	}
}
