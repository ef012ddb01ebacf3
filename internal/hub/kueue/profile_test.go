package kueue

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	authv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"
	"github.com/flotilla/flotilla/api/scheme"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/contract/kueueworker"
)

// TestProfileCredentials: on the ClusterProfile path the hub makes, for a worker it accepts (and
// for no other), the
// work with MultiKueue's rules for the ManagedServiceAccount's ServiceAccount, that
// ManagedServiceAccount and the managed-serviceaccount add-on, and no Secret-path object; when the
// cluster stops being a worker they go, but an add-on another ManagedServiceAccount still needs,
// or one the hub did not enable, stays; a ManagedServiceAccount of that name that is not the hub's
// is the user's: it gets none of the hub's objects beside it and is never deleted.
func TestProfileCredentials(t *testing.T) {
	hubs := map[string]string{ManagedLabel: ManagedValue}
	cases := map[string]struct {
		before      []client.Object
		worker      bool
		notAccepted bool
		want        []string
		wantMSA     *authv1beta1.ManagedServiceAccountSpec
	}{
		"a worker the hub does not accept": {worker: true, notAccepted: true},
		"no longer a worker, the user's ManagedServiceAccount of that name": {
			before: []client.Object{&authv1beta1.ManagedServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: kueueworker.ManagedServiceAccount}}},
			want:   []string{"ManagedServiceAccount"}, wantMSA: &authv1beta1.ManagedServiceAccountSpec{}},
		"a worker": {worker: true, want: []string{"ManifestWork", "ManagedServiceAccount", "ManagedClusterAddOn"},
			wantMSA: &authv1beta1.ManagedServiceAccountSpec{Rotation: authv1beta1.ManagedServiceAccountRotation{Enabled: true, Validity: metav1.Duration{Duration: time.Hour}}}},
		"no longer a worker": {},
		"no longer a worker, another ManagedServiceAccount in the namespace": {
			before: []client.Object{&authv1beta1.ManagedServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "argocd"}}},
			want:   []string{"ManagedClusterAddOn"}},
		"no longer a worker, the add-on the user's": {
			before: []client.Object{&addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: authv1beta1.AddOnName}}},
			want:   []string{"ManagedClusterAddOn"}},
		"a worker whose add-on the user enabled": {worker: true,
			before:  []client.Object{&addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: authv1beta1.AddOnName}}},
			want:    []string{"ManifestWork", "ManagedServiceAccount", "ManagedClusterAddOn"},
			wantMSA: &authv1beta1.ManagedServiceAccountSpec{Rotation: authv1beta1.ManagedServiceAccountRotation{Enabled: true, Validity: metav1.Duration{Duration: time.Hour}}}},
		"the user's ManagedServiceAccount": {worker: true,
			before: []client.Object{&authv1beta1.ManagedServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: kueueworker.ManagedServiceAccount}}},
			want:   []string{"ManagedServiceAccount"}, wantMSA: &authv1beta1.ManagedServiceAccountSpec{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			mkc := &kueuev1beta2.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "mkc-uid", Labels: hubs}, Spec: ClusterSpec("a", SourceClusterProfile)}
			objs := append(append(clusterObjects("a", !tc.notAccepted, false, false), mkc), tc.before...)
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).Build()
			cr := &CredentialsReconciler{Client: c, SecretReader: c, Namespace: DefaultNamespace, Source: SourceClusterProfile}
			req := reconcile.Request{NamespacedName: client.ObjectKey{Name: "a"}}
			if _, err := cr.Reconcile(ctx, req); err != nil {
				t.Fatal(err)
			}
			if !tc.worker {
				if err := c.Delete(ctx, mkc); err != nil {
					t.Fatal(err)
				}
				if _, err := cr.Reconcile(ctx, req); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			msa := &authv1beta1.ManagedServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: kueueworker.ManagedServiceAccount}}
			work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: kueueworker.WorkName}}
			for _, o := range []client.Object{work, msa,
				&addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: authv1beta1.AddOnName}},
				&addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: kueueworker.AddOnName}},
			} {
				if exists(t, c, o) {
					got = append(got, reflect.TypeOf(o).Elem().Name())
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the objects for cluster a (-want +got):\n%s", diff)
			}
			if tc.wantMSA != nil {
				if diff := cmp.Diff(*tc.wantMSA, msa.Spec); diff != "" {
					t.Errorf("ManagedServiceAccount a/multikueue spec (-want +got):\n%s", diff)
				}
			}
			for _, o := range tc.before {
				got := o.DeepCopyObject().(client.Object)
				if exists(t, c, got) && got.GetResourceVersion() != o.GetResourceVersion() {
					t.Errorf("%T %s of the user's was written (resource version %s, was %s)", o, o.GetName(), got.GetResourceVersion(), o.GetResourceVersion())
				}
			}
			if exists(t, c, work) && len(work.Spec.Workload.Manifests) != len(kueueworker.ProfileManifests()) {
				t.Errorf("the work holds %d manifests, want the %d of ProfileManifests (no ServiceAccount of its own)",
					len(work.Spec.Workload.Manifests), len(kueueworker.ProfileManifests()))
			}
		})
	}
}
