package builtins

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
)

// TestInstaller: the hub creates the built-in add-ons' ClusterManagementAddOns that are missing,
// and never changes one that exists, whether a user edited the hub's or made one of that name.
func TestInstaller(t *testing.T) {
	ctx := context.Background()
	theirs := &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: builtinaddon.ResourceUsage.Name},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{AddOnMeta: addonv1alpha1.AddOnMeta{DisplayName: "someone else's"}}}
	cases := map[string]struct {
		existing []client.Object
		want     *addonv1alpha1.ClusterManagementAddOn
	}{
		"missing: created, Manual, labeled": {want: Desired(builtinaddon.ResourceUsage)},
		"someone else's of that name: left": {existing: []client.Object{theirs.DeepCopy()}, want: theirs},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(tc.existing...).Build()
			if err := (&Installer{Client: c}).Start(ctx); err != nil {
				t.Fatal(err)
			}
			got := &addonv1alpha1.ClusterManagementAddOn{}
			if err := c.Get(ctx, client.ObjectKey{Name: builtinaddon.ResourceUsage.Name}, got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want.Labels, got.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want.Spec, got.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}
