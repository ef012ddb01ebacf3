package fleetqueue

import (
	"context"
	"encoding/json"
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
	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

func TestWorkerQueues(t *testing.T) {
	fq := &queuev1alpha1.FleetQueue{ObjectMeta: metav1.ObjectMeta{Name: "ml"}}
	lq := func(ns, name string) kueuev1beta2.LocalQueue {
		return kueuev1beta2.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	w, err := WorkerQueues(fq, []kueuev1beta2.LocalQueue{lq("team-a", "user-queue"), lq("shared", "b"), lq("shared", "c")}, "gpu-1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range w.Spec.Workload.Manifests {
		var o struct {
			Kind     string            `json:"kind"`
			Metadata metav1.ObjectMeta `json:"metadata"`
			Spec     map[string]any    `json:"spec"`
		}
		if err := json.Unmarshal(m.Raw, &o); err != nil {
			t.Fatal(err)
		}
		got = append(got, o.Kind+" "+o.Metadata.Namespace+"/"+o.Metadata.Name+" "+toString(o.Spec["clusterQueue"]))
	}
	want := []string{"Namespace /team-a ", "Namespace /shared ", "LocalQueue team-a/user-queue cluster-queue", "LocalQueue shared/b cluster-queue", "LocalQueue shared/c cluster-queue"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("manifests (-want +got):\n%s", diff)
	}
	if w.Namespace != "gpu-1" || w.Name != "fleetqueue-ml" || w.Labels[FleetQueueLabel] != "ml" {
		t.Errorf("work %s/%s labels %v, want gpu-1/fleetqueue-ml labeled for ml", w.Namespace, w.Name, w.Labels)
	}
	for _, c := range w.Spec.ManifestConfigs {
		if c.UpdateStrategy == nil || c.UpdateStrategy.Type != workv1.UpdateStrategyTypeCreateOnly {
			t.Errorf("%+v: want CreateOnly, so that what the worker already has is neither changed nor owned", c.ResourceIdentifier)
		}
	}
	if diff := cmp.Diff([]workv1.OrphaningRule{{Resource: "namespaces", Name: "team-a"}, {Resource: "namespaces", Name: "shared"}},
		w.Spec.DeleteOption.SelectivelyOrphans.OrphaningRules); diff != "" {
		t.Errorf("namespaces left behind when the work goes (-want +got):\n%s", diff)
	}

	// The API server may give a manifest back with its keys in another order: no rewrite.
	back := *w.Spec.DeepCopy()
	back.Workload.Manifests[0].Raw = []byte(`{"status":{},"spec":{},"metadata":{"name":"team-a"},"kind":"Namespace","apiVersion":"v1"}`)
	if !workv1.SameSpec(&w.Spec, &back) {
		t.Errorf("the same manifest with its keys reordered is taken for a change:\n%s\n%s", w.Spec.Workload.Manifests[0].Raw, back.Workload.Manifests[0].Raw)
	}
	back.Workload.Manifests[0].Raw = []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-b"}}`)
	if workv1.SameSpec(&w.Spec, &back) {
		t.Error("another namespace is taken for the same")
	}
}

func toString(v any) string {
	s, _ := v.(string)
	return s
}

// The works of clusters that left the config go; a work of that name the hub did not make for
// this FleetQueue stays, and is reported.
func TestApplyWorkerQueuesOwnership(t *testing.T) {
	fq := &queuev1alpha1.FleetQueue{ObjectMeta: metav1.ObjectMeta{Name: "ml", UID: "uid-ml"}}
	ours := []metav1.OwnerReference{{APIVersion: queuev1alpha1.GroupVersion.String(), Kind: "FleetQueue", Name: "ml", UID: types.UID("uid-ml"), Controller: ptr.To(true)}}
	work := func(ns string, labels map[string]string, owners []metav1.OwnerReference) client.Object {
		return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fleetqueue-ml", Labels: labels, OwnerReferences: owners}}
	}
	label := map[string]string{FleetQueueLabel: "ml"}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(
		work("left", label, ours),  // a worker that left the config: deleted
		work("byhand", label, nil), // labeled by someone else, not in the config: stays
		work("users", nil, nil),    // a user's work of the needed name on a worker: stays, reported
	).Build()
	r := &Reconciler{Client: c}
	lqs := []kueuev1beta2.LocalQueue{{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "user-queue"}}}
	keep := map[string]bool{}
	notOurs, err := r.applyWorkerQueues(context.Background(), fq, lqs, []string{"gpu-1", "users"}, keep)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.prune(context.Background(), fq, keep); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ManifestWork users/fleetqueue-ml"}, notOurs); diff != "" {
		t.Errorf("reported as not ours (-want +got):\n%s", diff)
	}
	l := &workv1.ManifestWorkList{}
	if err := c.List(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, w := range l.Items {
		left = append(left, w.Namespace)
	}
	if diff := cmp.Diff([]string{"byhand", "gpu-1", "users"}, left); diff != "" {
		t.Errorf("works left (-want +got):\n%s", diff)
	}
	users := &workv1.ManifestWork{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "users", Name: "fleetqueue-ml"}, users); err != nil || len(users.Spec.Workload.Manifests) != 0 {
		t.Errorf("the user's work was changed: %v %+v", err, users.Spec)
	}
}
