package fleetqueue

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	queuev1alpha1 "github.com/flotilla/flotilla/api/queue/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
)

// prune deletes only the FleetQueue's own stale objects: a ClusterQueue that carries its label
// but that the hub did not make for it (no controller reference to its UID), or that another
// FleetQueue made, stays.
func TestPruneDeletesOnlyWhatItMade(t *testing.T) {
	fq := &queuev1alpha1.FleetQueue{ObjectMeta: metav1.ObjectMeta{Name: "ml", UID: "uid-ml"}}
	ref := func(uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: queuev1alpha1.GroupVersion.String(), Kind: "FleetQueue", Name: "ml", UID: types.UID("uid-" + uid), Controller: ptr.To(true)}}
	}
	cq := func(name string, owners []metav1.OwnerReference) client.Object {
		return &kueuev1beta2.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{FleetQueueLabel: "ml"}, OwnerReferences: owners}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(
		cq("ml-kept", ref("ml")),            // still wanted
		cq("ml-removed-team", ref("ml")),    // ours, no longer wanted: deleted
		cq("ml-labeled-by-hand", nil),       // the label alone does not make it ours
		cq("ml-old-fleetqueue", ref("old")), // made for an earlier FleetQueue of the same name
	).Build()
	r := &Reconciler{Client: c}
	if err := r.prune(context.Background(), fq, map[string]bool{"cq/ml-kept": true}); err != nil {
		t.Fatal(err)
	}
	l := &kueuev1beta2.ClusterQueueList{}
	if err := c.List(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, q := range l.Items {
		left = append(left, q.Name)
	}
	if diff := cmp.Diff([]string{"ml-kept", "ml-labeled-by-hand", "ml-old-fleetqueue"}, left); diff != "" {
		t.Errorf("ClusterQueues left after prune (-want +got):\n%s", diff)
	}
}
