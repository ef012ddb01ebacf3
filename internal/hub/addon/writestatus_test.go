package addon

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/core/rollout"
	"github.com/flotilla/flotilla/internal/hub/addon/addontest"
)

// Another controller writes its part of the status between the hub's read and its write: the
// hub's part (Configured, configReferences) goes on top of what the API server has then, and the
// other part stays. A spec changed meanwhile leaves the write to the pass that change brings.
func TestWriteAddonStatusAfterAConflict(t *testing.T) {
	// The template controller's condition: the hub's write keeps it. (Progressing is not a
	// condition another writer keeps: the hub's write carries the one that follows from it.)
	available := metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable, Status: metav1.ConditionTrue,
		Reason: "ProbeAvailable", Message: "available", LastTransitionTime: metav1.NewTime(t0)}
	cases := map[string]struct {
		// meanwhile changes the stored ManagedClusterAddOn before the hub's first write lands.
		meanwhile      func(m *addonv1alpha1.ManagedClusterAddOn)
		wantConditions []string
	}{
		"another controller wrote the status": {
			meanwhile:      func(m *addonv1alpha1.ManagedClusterAddOn) { meta.SetStatusCondition(&m.Status.Conditions, available) },
			wantConditions: []string{"Available=True", "Configured=True", "Progressing=False"},
		},
		"the spec changed": {
			meanwhile:      func(m *addonv1alpha1.ManagedClusterAddOn) { m.Generation++ },
			wantConditions: nil,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "gpu", Generation: 1}}
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(mca).WithStatusSubresource(mca).
				WithInterceptorFuncs(addontest.ConflictOnce(tc.meanwhile)).Build()
			cached := &addonv1alpha1.ManagedClusterAddOn{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(mca), cached); err != nil {
				t.Fatal(err)
			}
			r := &Reconciler{Client: c, Reader: c}
			v := &addonView{MCA: cached, Desired: []addonv1alpha1.ConfigReference{reference("a", "h2", "")}, InRollout: true,
				State: rollout.ClusterStatus{Status: rollout.ToApply}}
			if err := r.writeAddonStatus(context.Background(), cmaWith(), v, metav1.NewTime(t0)); err != nil {
				t.Fatalf("writeAddonStatus: %v", err)
			}
			got := &addonv1alpha1.ManagedClusterAddOn{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(mca), got); err != nil {
				t.Fatal(err)
			}
			var conds []string
			for _, cond := range got.Status.Conditions {
				conds = append(conds, cond.Type+"="+string(cond.Status))
			}
			if diff := cmp.Diff(tc.wantConditions, conds); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}
