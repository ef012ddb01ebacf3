//go:build integration

package placement

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const a100 = "NVIDIA-A100-SXM4-80GB"

// TestGPUFit: a placement that needs 2 nodes with 8 free A100 each (gang fit) against
// ResourceUsages written as an administrator in the clusters' namespaces. At first neither
// cluster fits although both have 16 free in total; then one cluster's nodes free up and the
// placement selects it; then they fill up again and the other's free up, and the decision moves.
func TestGPUFit(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := admin(t, env)
	startHub(t, env)
	f := env.NewBoundSet(t, c, "pl-gpu")
	f.Cluster(t, "pl-gpu-1", nil)
	f.Cluster(t, "pl-gpu-2", nil)

	usages := map[string]*usagev1alpha1.ResourceUsage{}
	for _, cluster := range []string{"pl-gpu-1", "pl-gpu-2"} {
		if _, err := env.Hub.Client.CoreV1().Namespaces().Create(context.Background(),
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = env.Hub.Client.CoreV1().Namespaces().Delete(context.Background(), cluster, metav1.DeleteOptions{})
		})
		u := &usagev1alpha1.ResourceUsage{ObjectMeta: metav1.ObjectMeta{Name: usagev1alpha1.ResourceUsageName, Namespace: cluster}}
		testenv.Create(t, c, u)
		// 16 free in all: one node with 8, two more with 4.
		setUsage(t, c, u, 16, [2]int64{8, 1}, [2]int64{4, 3})
		usages[cluster] = u
	}

	p := labelPlacement(f.Namespace, "gang", 1, nil)
	p.Annotations = map[string]string{"placement.flotilla.io/gpu": "model=" + a100 + ",perNode=8,nodes=2"}
	testenv.Create(t, c, p)
	got := waitStatus(t, c, f.Namespace, "gang", 0, map[string]string{
		clusterv1beta1.PlacementConditionSatisfied:     "False/" + clusterv1beta1.PlacementReasonNoManagedClusterMatched,
		clusterv1beta1.PlacementConditionMisconfigured: "False/" + clusterv1beta1.PlacementReasonSucceedConfigured})
	if msg := meta.FindStatusCondition(got.Status.Conditions, clusterv1beta1.PlacementConditionSatisfied).Message; strings.Contains(msg, "model=") {
		t.Errorf("PlacementSatisfied says %q; every cluster has the model, so it should not name it as missing", msg)
	}

	// pl-gpu-2's nodes free up: two nodes with 8, the same 16 in all (so the AddOnPlacementScores
	// made from the totals by the hub's resource-usage controller do not change: only the
	// ResourceUsage's own event reschedules the placement).
	setUsage(t, c, usages["pl-gpu-2"], 16, [2]int64{8, 2})
	waitDecisions(t, c, f.Namespace, "gang", decisionView{"gang-decision-1": {Labels: labels("gang", "", 0), Clusters: []string{"pl-gpu-2"}}})
	waitStatus(t, c, f.Namespace, "gang", 1, satisfied)

	// pl-gpu-2 fills up and pl-gpu-1 frees up: the decision moves.
	setUsage(t, c, usages["pl-gpu-2"], 4, [2]int64{4, 1})
	setUsage(t, c, usages["pl-gpu-1"], 24, [2]int64{8, 3})
	waitDecisions(t, c, f.Namespace, "gang", decisionView{"gang-decision-1": {Labels: labels("gang", "", 0), Clusters: []string{"pl-gpu-1"}}})
}

// usageTime is when setUsage says the figures were observed.
var usageTime = time.Now().Truncate(time.Second)

// setUsage writes u's figures (a status subresource): free A100 in all, and the distribution
// as pairs {amount, nodes with at least that amount}, largest first; valid for an hour.
func setUsage(t *testing.T, c client.Client, u *usagev1alpha1.ResourceUsage, free int64, dist ...[2]int64) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(u), u); err != nil {
			return err
		}
		// The same times every write: only the figures change, as when a spoke's pods move.
		observed, until := metav1.NewTime(usageTime), metav1.NewTime(usageTime.Add(time.Hour))
		var nodes []usagev1alpha1.NodesWithFree
		for _, d := range dist {
			nodes = append(nodes, usagev1alpha1.NodesWithFree{Free: *resource.NewQuantity(d[0], resource.DecimalSI), Nodes: int32(d[1])})
		}
		capacity := resource.MustParse("32")
		f := usagev1alpha1.ResourceFigures{Name: usagev1alpha1.ResourceNvidiaGPU, Capacity: capacity, Allocatable: capacity,
			Requested: *resource.NewQuantity(32-free, resource.DecimalSI), Free: *resource.NewQuantity(free, resource.DecimalSI), FreeNodes: nodes}
		m := f
		m.Model = a100
		u.Status = usagev1alpha1.ResourceUsageStatus{ObservedTime: &observed, ValidUntil: &until, Nodes: 4,
			Resources: []usagev1alpha1.ResourceFigures{f, m}}
		return c.Status().Update(context.Background(), u)
	})
	if err != nil {
		t.Fatalf("writing ResourceUsage %s/%s: %v", u.Namespace, u.Name, err)
	}
}
