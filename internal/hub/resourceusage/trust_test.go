package resourceusage

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

// acceptedClusters is, for each name, an accepted ManagedCluster and the namespace the hub made
// for it.
func acceptedClusters(names ...string) []client.Object {
	var out []client.Object
	for _, n := range names {
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: n, UID: types.UID("uid-" + n)}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: clusterv1.GroupVersion.String(), Kind: "ManagedCluster", Name: n, UID: mc.UID, Controller: ptrTrue()}}}}
		out = append(out, mc, ns)
	}
	return out
}

func ptrTrue() *bool { t := true; return &t }

type recorded []string

func (e *recorded) Eventf(_ runtime.Object, _ runtime.Object, _, reason, _, note string, args ...interface{}) {
	*e = append(*e, reason+": "+strings.TrimSpace(fmt.Sprintf(note, args...)))
}

// One cluster reporting a million GPUs, a namespace that is no accepted cluster's, a denied
// cluster and a namespace someone else made leave every other cluster's scores as they are.
func TestOnlyPlausibleFiguresOfAcceptedClustersCount(t *testing.T) {
	honest := []usagev1alpha1.ResourceUsage{
		gpuUsage("big", 8, 8, map[int64]int32{8: 4}),
		gpuUsage("small", 2, 4, map[int64]int32{4: 2}),
	}
	liar := gpuUsage("liar", 2, 8, map[int64]int32{8: 2})
	liar.Status.Resources[0].Capacity = *resource.NewQuantity(1_000_000, resource.DecimalSI)
	liar.Status.Resources[0].Allocatable = *resource.NewQuantity(1_000_000, resource.DecimalSI)
	liar.Status.Resources[0].Free = *resource.NewQuantity(1_000_000, resource.DecimalSI)
	// Plausible figures, but in namespaces whose figures must not count.
	tenant := gpuUsage("team-a", 16, 8, map[int64]int32{8: 16})
	denied := gpuUsage("denied", 16, 8, map[int64]int32{8: 16})
	squatted := gpuUsage("squatted", 16, 8, map[int64]int32{8: 16})

	scoresOf := func(t *testing.T, usages []usagev1alpha1.ResourceUsage, extra []client.Object) (map[string]map[string]int32, recorded) {
		t.Helper()
		objs := append(acceptedClusters("big", "small", "liar"), extra...)
		for i := range usages {
			objs = append(objs, &usages[i])
		}
		c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).
			WithStatusSubresource(&clusterv1alpha1.AddOnPlacementScore{}).Build()
		var ev recorded
		r := &Reconciler{Client: c, Recorder: &ev, all: make(chan event.GenericEvent, 64)}
		ctx := context.Background()
		for _, u := range usages {
			if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&u)}); err != nil {
				t.Fatal(err)
			}
		}
		// Every cluster again, as when the maxima moved.
		for len(r.all) > 0 {
			e := <-r.all
			if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.Object)}); err != nil {
				t.Fatal(err)
			}
		}
		out := map[string]map[string]int32{}
		for _, ns := range []string{"big", "small"} {
			s := &clusterv1alpha1.AddOnPlacementScore{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterv1alpha1.ResourceUsageScoreName}, s); err != nil {
				t.Fatalf("score of %s: %v", ns, err)
			}
			out[ns] = map[string]int32{}
			for _, v := range s.Status.Scores {
				if strings.HasPrefix(v.Name, "gpu") {
					out[ns][v.Name] = v.Value
				}
			}
		}
		return out, ev
	}
	want, _ := scoresOf(t, honest, nil)
	deniedMC := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "denied", UID: "uid-denied"}}
	deniedNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "denied", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: clusterv1.GroupVersion.String(), Kind: "ManagedCluster", Name: "denied", UID: "uid-denied", Controller: ptrTrue()}}}}
	squattedMC := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "squatted", UID: "uid-squatted"}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
	squattedNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "squatted"}}
	got, ev := scoresOf(t, append(append([]usagev1alpha1.ResourceUsage{}, honest...), liar, tenant, denied, squatted),
		[]client.Object{deniedMC, deniedNS, squattedMC, squattedNS, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the other clusters' GPU scores moved (-without +with the liar and the others):\n%s", diff)
	}
	if len(ev) != 1 || !strings.Contains(ev[0], ReasonImplausible+": cluster liar") || !strings.Contains(ev[0], "status.resources[0] (nvidia.com/gpu)") ||
		!strings.Contains(ev[0], "allocatable 1M is above 2 nodes") {
		t.Errorf("events %q, want one %s naming cluster liar, the field and the cap", ev, ReasonImplausible)
	}
}

func TestImplausible(t *testing.T) {
	ok := gpuUsage("c", 2, 8, map[int64]int32{8: 1})
	mut := func(f func(*usagev1alpha1.ResourceFigures, *usagev1alpha1.ResourceUsageStatus)) *usagev1alpha1.ResourceUsage {
		u := ok.DeepCopy()
		f(&u.Status.Resources[0], &u.Status)
		return u
	}
	q := func(n int64) resource.Quantity { return *resource.NewQuantity(n, resource.DecimalSI) }
	for name, tc := range map[string]struct {
		u        *usagev1alpha1.ResourceUsage
		maxAccel int64
		want     string // in the error; "" for plausible
	}{
		"plausible": {u: &ok},
		"allocatable above capacity": {u: mut(func(f *usagev1alpha1.ResourceFigures, _ *usagev1alpha1.ResourceUsageStatus) { f.Capacity = q(8) }),
			want: "allocatable 16 is above capacity 8"},
		"free above allocatable": {u: mut(func(f *usagev1alpha1.ResourceFigures, _ *usagev1alpha1.ResourceUsageStatus) { f.Free = q(17) }),
			want: "free 17 is above allocatable 16"},
		"a node above the default cap": {u: mut(func(f *usagev1alpha1.ResourceFigures, s *usagev1alpha1.ResourceUsageStatus) {
			f.Capacity, f.Allocatable, f.LargestNodeAllocatable, s.Nodes = q(200), q(200), q(100), 2
		}), want: "largestNodeAllocatable 100 is above the cap of 64 per node (hub flag " + MaxAcceleratorsFlag + ")"},
		"the same with a higher cap": {maxAccel: 128, u: mut(func(f *usagev1alpha1.ResourceFigures, s *usagev1alpha1.ResourceUsageStatus) {
			f.Capacity, f.Allocatable, f.LargestNodeAllocatable, s.Nodes = q(200), q(200), q(100), 2
		})},
		"more than nodes times the cap": {u: mut(func(f *usagev1alpha1.ResourceFigures, _ *usagev1alpha1.ResourceUsageStatus) {
			f.Capacity, f.Allocatable = q(1000), q(1000)
		}), want: "allocatable 1k is above 2 nodes (status.nodes) times the cap of 64 per node"},
		"per-node figures that fit": {u: mut(func(f *usagev1alpha1.ResourceFigures, _ *usagev1alpha1.ResourceUsageStatus) {
			f.Nodes = []usagev1alpha1.NodeFigures{{Name: "a", Allocatable: q(8), Requested: q(12)}, {Name: "b", Allocatable: q(8)}}
		})},
		"more nodes listed than counted": {u: mut(func(f *usagev1alpha1.ResourceFigures, _ *usagev1alpha1.ResourceUsageStatus) {
			f.Nodes = []usagev1alpha1.NodeFigures{{Name: "a", Allocatable: q(1)}, {Name: "b", Allocatable: q(1)}, {Name: "c", Allocatable: q(1)}}
		}), want: "3 nodes are listed but status.nodes counts 2"},
		"a node listed twice": {u: mut(func(f *usagev1alpha1.ResourceFigures, _ *usagev1alpha1.ResourceUsageStatus) {
			f.Nodes = []usagev1alpha1.NodeFigures{{Name: "a", Allocatable: q(8)}, {Name: "a", Allocatable: q(8)}}
		}), want: "nodes[1] (a) is not after nodes[0] (a)"},
		"nodes adding up to more than allocatable": {u: mut(func(f *usagev1alpha1.ResourceFigures, _ *usagev1alpha1.ResourceUsageStatus) {
			f.Nodes = []usagev1alpha1.NodeFigures{{Name: "a", Allocatable: q(8)}, {Name: "b", Allocatable: q(9)}}
		}), want: "the nodes' allocatable adds up to 17, above allocatable 16"},
		"a node above the cap": {u: mut(func(f *usagev1alpha1.ResourceFigures, s *usagev1alpha1.ResourceUsageStatus) {
			f.Capacity, f.Allocatable, s.Nodes = q(100), q(100), 2
			f.Nodes = []usagev1alpha1.NodeFigures{{Name: "a", Allocatable: q(100)}}
		}), want: "nodes[0] (a): allocatable 100 is above the cap of 64 per node"},
	} {
		t.Run(name, func(t *testing.T) {
			err := (&Reconciler{MaxAcceleratorsPerNode: tc.maxAccel}).Implausible(tc.u)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("plausible figures refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}
