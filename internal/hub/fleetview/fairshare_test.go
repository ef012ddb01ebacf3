package fleetview

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/flotilla/flotilla/api/scheme"
)

func TestFairShare(t *testing.T) {
	cq := func(name, cohort, weight string, share int64, pending int32) client.Object {
		q := &kueuev1beta2.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueuev1beta2.ClusterQueueSpec{CohortName: kueuev1beta2.CohortReference(cohort)}}
		if weight != "" {
			w := resource.MustParse(weight)
			q.Spec.FairSharing = &kueuev1beta2.FairSharing{Weight: &w}
		}
		q.Status.FairSharing = &kueuev1beta2.FairSharingStatus{WeightedShare: share}
		q.Status.PendingWorkloads = pending
		return q
	}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(
		cq("ml-research", "ml", "2", 250, 3), cq("ml-prod", "ml", "", 500, 9), cq("ml-interns", "ml", "1", 0, 1),
		cq("other", "elsewhere", "1", 0, 0), cq("alone", "", "", 0, 0),
	).Build()
	got, err := fairShare(context.Background(), c, "ml-prod")
	if err != nil {
		t.Fatal(err)
	}
	want := &FairShare{Cohort: "ml", Rank: 3, ClusterQueues: []FairShareQueue{
		{Name: "ml-interns", Weight: "1", WeightedShare: 0, PendingWorkloads: 1},
		{Name: "ml-research", Weight: "2", WeightedShare: 250, PendingWorkloads: 3},
		{Name: "ml-prod", Weight: "1", WeightedShare: 500, PendingWorkloads: 9},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fairShare (-want +got):\n%s", diff)
	}
	for _, name := range []string{"alone", "missing"} {
		if got, err := fairShare(context.Background(), c, name); err != nil || got != nil {
			t.Errorf("fairShare(%s) = %+v, %v; want nil (no cohort)", name, got, err)
		}
	}
}
