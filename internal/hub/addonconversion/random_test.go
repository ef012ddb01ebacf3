package addonconversion

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/randfill"

	"github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/api/addon/v1beta1"
)

// filler makes random objects whose every field may be set, with values that survive JSON
// (times to the second, valid quantities and int-or-strings) and the shapes the mapping tells
// apart made likely (the kube-apiserver client signer, the reserved default config name).
func filler(seed int64) *randfill.Filler {
	return randfill.NewWithSeed(seed).NilChance(0.2).NumElements(0, 3).Funcs(
		func(m *metav1.ObjectMeta, c randfill.Continue) {
			m.Name, m.Namespace = c.String(8), c.String(8)
			c.Fill(&m.Labels)
			c.Fill(&m.Annotations)
			if c.Bool() {
				m.Annotations = map[string]string{InstallNamespaceAnnotation: c.String(5)}
			}
		},
		func(t *metav1.Time, c randfill.Continue) {
			*t = metav1.NewTime(time.Unix(c.Int63n(1<<32), 0).UTC())
		},
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewQuantity(c.Int63n(1<<20), resource.DecimalSI)
		},
		func(v *intstr.IntOrString, c randfill.Continue) {
			if c.Bool() {
				*v = intstr.FromInt32(c.Int31n(100))
			} else {
				*v = intstr.FromString(c.String(4))
			}
		},
		func(r *v1alpha1.RegistrationConfig, c randfill.Continue) {
			c.FillNoCustom(r)
			if c.Bool() {
				r.SignerName = v1alpha1.KubeAPIServerClientSignerName
			}
		},
		func(r *v1beta1.RegistrationConfig, c randfill.Continue) {
			c.FillNoCustom(r)
			r.Type = []v1beta1.RegistrationType{v1beta1.KubeClient, v1beta1.CustomSigner, "other"}[c.Intn(3)]
			if r.CustomSigner != nil && c.Bool() {
				r.CustomSigner.SignerName = v1alpha1.KubeAPIServerClientSignerName
			}
		},
		func(r *v1beta1.AddOnConfig, c randfill.Continue) {
			c.FillNoCustom(r)
			if c.Bool() {
				r.Name = ReservedNoDefaultConfigName
			}
		},
		func(r *v1alpha1.ConfigReference, c randfill.Continue) {
			c.FillNoCustom(r)
			if r.DesiredConfig != nil && c.Bool() {
				r.ConfigReferent = r.DesiredConfig.ConfigReferent
			}
		},
	)
}

// roundTrip converts in with there and then back, and says how the result differs from in on
// the wire.
func roundTrip[A, B any](t *testing.T, in *A, there func(*A) (*B, error), back func(*B) (*A, error)) string {
	t.Helper()
	mid, err := there(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := back(mid)
	if err != nil {
		t.Fatal(err)
	}
	return cmp.Diff(wire(t, in), wire(t, got))
}

// TestRandomRoundTrip: random objects, every field set or not at random, come back unchanged
// from the other version, in both directions.
func TestRandomRoundTrip(t *testing.T) {
	const n = 300
	check := func(t *testing.T, i int, diff string) {
		t.Helper()
		if diff != "" {
			t.Fatalf("object %d (-want +got):\n%s", i, diff)
		}
	}
	cases := map[string]func(t *testing.T, f *randfill.Filler) string{
		"v1alpha1 ClusterManagementAddOn": func(t *testing.T, f *randfill.Filler) string {
			in := &v1alpha1.ClusterManagementAddOn{}
			f.Fill(in)
			in.APIVersion, in.Kind = v1alpha1.GroupVersion.String(), "ClusterManagementAddOn"
			return roundTrip(t, in, ClusterManagementAddOnToV1beta1, ClusterManagementAddOnToV1alpha1)
		},
		"v1beta1 ClusterManagementAddOn": func(t *testing.T, f *randfill.Filler) string {
			in := &v1beta1.ClusterManagementAddOn{}
			f.Fill(in)
			in.APIVersion, in.Kind = v1beta1.GroupVersion.String(), "ClusterManagementAddOn"
			return roundTrip(t, in, ClusterManagementAddOnToV1alpha1, ClusterManagementAddOnToV1beta1)
		},
		"v1alpha1 ManagedClusterAddOn": func(t *testing.T, f *randfill.Filler) string {
			in := &v1alpha1.ManagedClusterAddOn{}
			f.Fill(in)
			in.APIVersion, in.Kind = v1alpha1.GroupVersion.String(), "ManagedClusterAddOn"
			return roundTrip(t, in, ManagedClusterAddOnToV1beta1, ManagedClusterAddOnToV1alpha1)
		},
		"v1beta1 ManagedClusterAddOn": func(t *testing.T, f *randfill.Filler) string {
			in := &v1beta1.ManagedClusterAddOn{}
			f.Fill(in)
			in.APIVersion, in.Kind = v1beta1.GroupVersion.String(), "ManagedClusterAddOn"
			return roundTrip(t, in, ManagedClusterAddOnToV1alpha1, ManagedClusterAddOnToV1beta1)
		},
		"v1alpha1 AddOnDeploymentConfig": func(t *testing.T, f *randfill.Filler) string {
			in := &v1alpha1.AddOnDeploymentConfig{}
			f.Fill(in)
			in.APIVersion, in.Kind = v1alpha1.GroupVersion.String(), "AddOnDeploymentConfig"
			return roundTrip(t, in, AddOnDeploymentConfigToV1beta1, AddOnDeploymentConfigToV1alpha1)
		},
		"v1beta1 AddOnDeploymentConfig": func(t *testing.T, f *randfill.Filler) string {
			in := &v1beta1.AddOnDeploymentConfig{}
			f.Fill(in)
			in.APIVersion, in.Kind = v1beta1.GroupVersion.String(), "AddOnDeploymentConfig"
			return roundTrip(t, in, AddOnDeploymentConfigToV1alpha1, AddOnDeploymentConfigToV1beta1)
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := filler(1)
			for i := range n {
				check(t, i, tc(t, f))
			}
		})
	}
}
