package kueuequeues

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// TestApplyRetriesAConflict: Kueue writes the ClusterQueue too, so the add-on's update can lose
// a race. apply then reads the object again and writes, rather than failing the pass (which
// restarted the add-on after its backoff, and an edit stayed for that long).
func TestApplyRetriesAConflict(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := kueuev1beta2.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	d := Compute([]*corev1.Node{node("h1", h100, 8, "64", "512Gi")})
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	s := &spoke{cluster: "c", c: c}
	if _, err := s.apply(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	// Someone edits the quota; the add-on's next update conflicts twice, then goes through.
	cq := &kueuev1beta2.ClusterQueue{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: ClusterQueueName}, cq); err != nil {
		t.Fatal(err)
	}
	cq.Spec.ResourceGroups[0].Flavors[0].Resources[0].NominalQuota = resource.MustParse("1000")
	if err := c.Update(context.Background(), cq); err != nil {
		t.Fatal(err)
	}
	conflicts := 0
	s.c = interceptor.NewClient(c, interceptor.Funcs{
		Update: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if _, ok := obj.(*kueuev1beta2.ClusterQueue); ok && conflicts < 2 {
				conflicts++
				return apierrors.NewConflict(schema.GroupResource{Group: "kueue.x-k8s.io", Resource: "clusterqueues"}, obj.GetName(), nil)
			}
			return cl.Update(ctx, obj, opts...)
		},
	})
	writes, err := s.apply(context.Background(), d)
	if err != nil {
		t.Fatalf("apply after two conflicts: %v", err)
	}
	if writes != 1 || conflicts != 2 {
		t.Errorf("writes %d after %d conflicts, want 1 after 2", writes, conflicts)
	}
	got := &kueuev1beta2.ClusterQueue{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: ClusterQueueName}, got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(quotas(d.ClusterQueue), quotas(*got)); diff != "" {
		t.Errorf("quotas (-want +got):\n%s", diff)
	}
}
