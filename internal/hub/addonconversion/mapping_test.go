package addonconversion

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/api/addon/v1beta1"
)

const kubeSigner = v1alpha1.KubeAPIServerClientSignerName

func alphaMCA(mutate func(*v1alpha1.ManagedClusterAddOn)) *v1alpha1.ManagedClusterAddOn {
	m := &v1alpha1.ManagedClusterAddOn{
		TypeMeta:   metav1.TypeMeta{APIVersion: V1alpha1, Kind: "ManagedClusterAddOn"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "gpu"},
	}
	mutate(m)
	return m
}

func betaMCA(mutate func(*v1beta1.ManagedClusterAddOn)) *v1beta1.ManagedClusterAddOn {
	m := &v1beta1.ManagedClusterAddOn{
		TypeMeta:   metav1.TypeMeta{APIVersion: V1beta1, Kind: "ManagedClusterAddOn"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "gpu"},
	}
	mutate(m)
	return m
}

// TestManagedClusterAddOnToV1beta1: OCM's mapping, and annotations only where it loses something.
func TestManagedClusterAddOnToV1beta1(t *testing.T) {
	cases := map[string]struct {
		in   *v1alpha1.ManagedClusterAddOn
		want *v1beta1.ManagedClusterAddOn
	}{
		"install namespace: OCM's annotation": {
			in: alphaMCA(func(m *v1alpha1.ManagedClusterAddOn) { m.Spec.InstallNamespace = "addons" }),
			want: betaMCA(func(m *v1beta1.ManagedClusterAddOn) {
				m.Annotations = map[string]string{InstallNamespaceAnnotation: "addons"}
			}),
		},
		"kube-apiserver client signer: kubeClient with the driver; other signers: customSigner": {
			in: alphaMCA(func(m *v1alpha1.ManagedClusterAddOn) {
				m.Status.KubeClientDriver = v1alpha1.KubeClientDriverToken
				m.Status.Registrations = []v1alpha1.RegistrationConfig{
					{SignerName: kubeSigner, Subject: &v1alpha1.Subject{User: "u", Groups: []string{"g"}}},
					{SignerName: "example.com/metrics", Subject: &v1alpha1.Subject{User: "m", OrganizationUnits: []string{"ou"}}},
				}
			}),
			want: betaMCA(func(m *v1beta1.ManagedClusterAddOn) {
				m.Status.Registrations = []v1beta1.RegistrationConfig{
					{Type: v1beta1.KubeClient, KubeClient: &v1beta1.KubeClientConfig{
						Subject: v1beta1.KubeClientSubject{BaseSubject: v1beta1.BaseSubject{User: "u", Groups: []string{"g"}}},
						Driver:  v1beta1.KubeClientDriverToken,
					}},
					{Type: v1beta1.CustomSigner, CustomSigner: &v1beta1.CustomSignerConfig{
						SignerName: "example.com/metrics",
						Subject:    v1beta1.Subject{BaseSubject: v1beta1.BaseSubject{User: "m"}, OrganizationUnits: []string{"ou"}},
					}},
				}
			}),
		},
		"organization units of a kubeClient subject: kept in an annotation": {
			in: alphaMCA(func(m *v1alpha1.ManagedClusterAddOn) {
				m.Status.Registrations = []v1alpha1.RegistrationConfig{{SignerName: kubeSigner, Subject: &v1alpha1.Subject{User: "u", OrganizationUnits: []string{"ou"}}}}
			}),
			want: betaMCA(func(m *v1beta1.ManagedClusterAddOn) {
				m.Annotations = map[string]string{AlphaRegistrationsAnnotation: `{"registrations":[{"signerName":"kubernetes.io/kube-apiserver-client","subject":{"user":"u","organizationUnit":["ou"]}}]}`}
				m.Status.Registrations = []v1beta1.RegistrationConfig{{Type: v1beta1.KubeClient, KubeClient: &v1beta1.KubeClientConfig{
					Subject: v1beta1.KubeClientSubject{BaseSubject: v1beta1.BaseSubject{User: "u"}},
				}}}
			}),
		},
		"config reference: name and namespace from desiredConfig, or desiredConfig made of them": {
			in: alphaMCA(func(m *v1alpha1.ManagedClusterAddOn) {
				m.Status.ConfigReferences = []v1alpha1.ConfigReference{
					{
						ConfigGroupResource: v1alpha1.ConfigGroupResource{Resource: "r1"},
						ConfigReferent:      v1alpha1.ConfigReferent{Namespace: "n", Name: "a"},
						DesiredConfig:       &v1alpha1.ConfigSpecHash{ConfigReferent: v1alpha1.ConfigReferent{Namespace: "n", Name: "a"}, SpecHash: "h"},
					},
					{ConfigGroupResource: v1alpha1.ConfigGroupResource{Resource: "r2"}, ConfigReferent: v1alpha1.ConfigReferent{Name: "b"}},
				}
			}),
			want: betaMCA(func(m *v1beta1.ManagedClusterAddOn) {
				m.Annotations = map[string]string{AlphaConfigReferencesAnnotation: `[{"group":"","resource":"r1","namespace":"n","name":"a","desiredConfig":{"namespace":"n","name":"a","specHash":"h"}},{"group":"","resource":"r2","name":"b"}]`}
				m.Status.ConfigReferences = []v1beta1.ConfigReference{
					{ConfigGroupResource: v1beta1.ConfigGroupResource{Resource: "r1"}, DesiredConfig: &v1beta1.ConfigSpecHash{ConfigReferent: v1beta1.ConfigReferent{Namespace: "n", Name: "a"}, SpecHash: "h"}},
					{ConfigGroupResource: v1beta1.ConfigGroupResource{Resource: "r2"}, DesiredConfig: &v1beta1.ConfigSpecHash{ConfigReferent: v1beta1.ConfigReferent{Name: "b"}}},
				}
			}),
		},
		"status.addOnConfiguration: kept in an annotation": {
			in: alphaMCA(func(m *v1alpha1.ManagedClusterAddOn) {
				m.Status.AddOnConfiguration = v1alpha1.ConfigCoordinates{CRDName: "x.example.com"}
			}),
			want: betaMCA(func(m *v1beta1.ManagedClusterAddOn) {
				m.Annotations = map[string]string{AlphaAddOnConfigurationAnnotation: `{"crdName":"x.example.com"}`}
			}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ManagedClusterAddOnToV1beta1(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestClusterManagementAddOnMapping: supportedConfigs <-> defaultConfigs as OCM maps them.
func TestClusterManagementAddOnMapping(t *testing.T) {
	alpha := &v1alpha1.ClusterManagementAddOn{
		TypeMeta:   metav1.TypeMeta{APIVersion: V1alpha1, Kind: "ClusterManagementAddOn"},
		ObjectMeta: metav1.ObjectMeta{Name: "gpu"},
		Spec: v1alpha1.ClusterManagementAddOnSpec{
			SupportedConfigs: []v1alpha1.ConfigMeta{
				{ConfigGroupResource: v1alpha1.ConfigGroupResource{Group: "g", Resource: "with"}, DefaultConfig: &v1alpha1.ConfigReferent{Namespace: "n", Name: "d"}},
				{ConfigGroupResource: v1alpha1.ConfigGroupResource{Group: "g", Resource: "without"}},
			},
		},
	}
	beta := &v1beta1.ClusterManagementAddOn{
		TypeMeta:   metav1.TypeMeta{APIVersion: V1beta1, Kind: "ClusterManagementAddOn"},
		ObjectMeta: metav1.ObjectMeta{Name: "gpu"},
		Spec: v1beta1.ClusterManagementAddOnSpec{
			DefaultConfigs: []v1beta1.AddOnConfig{
				{ConfigGroupResource: v1beta1.ConfigGroupResource{Group: "g", Resource: "with"}, ConfigReferent: v1beta1.ConfigReferent{Namespace: "n", Name: "d"}},
				{ConfigGroupResource: v1beta1.ConfigGroupResource{Group: "g", Resource: "without"}, ConfigReferent: v1beta1.ConfigReferent{Name: ReservedNoDefaultConfigName}},
			},
		},
	}
	gotBeta, err := ClusterManagementAddOnToV1beta1(alpha)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(beta, gotBeta); diff != "" {
		t.Errorf("to v1beta1 (-want +got):\n%s", diff)
	}
	gotAlpha, err := ClusterManagementAddOnToV1alpha1(beta)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(alpha, gotAlpha); diff != "" {
		t.Errorf("to v1alpha1 (-want +got):\n%s", diff)
	}
}

// TestParkedValueGoneStale: a v1beta1 client that changes a field whose v1alpha1 original the
// object carries gets its change; the original is dropped, not restored over it.
func TestParkedValueGoneStale(t *testing.T) {
	alpha := alphaMCA(func(m *v1alpha1.ManagedClusterAddOn) {
		m.Status.Registrations = []v1alpha1.RegistrationConfig{{SignerName: kubeSigner, Subject: &v1alpha1.Subject{User: "u", OrganizationUnits: []string{"ou"}}}}
	})
	beta, err := ManagedClusterAddOnToV1beta1(alpha)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := beta.Annotations[AlphaRegistrationsAnnotation]; !ok {
		t.Fatalf("no %s on %v", AlphaRegistrationsAnnotation, beta.Annotations)
	}
	// Unchanged: the organization units come back.
	back, err := ManagedClusterAddOnToV1alpha1(beta)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(alpha, back); diff != "" {
		t.Errorf("unchanged (-want +got):\n%s", diff)
	}
	// Changed in v1beta1: the change wins.
	beta.Status.Registrations[0].KubeClient.Subject.User = "v"
	back, err = ManagedClusterAddOnToV1alpha1(beta)
	if err != nil {
		t.Fatal(err)
	}
	want := alphaMCA(func(m *v1alpha1.ManagedClusterAddOn) {
		m.Status.Registrations = []v1alpha1.RegistrationConfig{{SignerName: kubeSigner, Subject: &v1alpha1.Subject{User: "v"}}}
	})
	if diff := cmp.Diff(want, back); diff != "" {
		t.Errorf("changed (-want +got):\n%s", diff)
	}
}

func TestConvertRefuses(t *testing.T) {
	cases := map[string]struct {
		obj, to  string
		wantErrs []string
	}{
		"unknown kind": {
			obj:      `{"apiVersion":"addon.open-cluster-management.io/v1alpha1","kind":"AddOnTemplate","metadata":{"name":"t"}}`,
			to:       V1beta1,
			wantErrs: []string{"AddOnTemplate t", `kind "AddOnTemplate"`},
		},
		"unknown source version": {
			obj:      `{"apiVersion":"addon.open-cluster-management.io/v2","kind":"ManagedClusterAddOn","metadata":{"namespace":"c1","name":"gpu"}}`,
			to:       V1beta1,
			wantErrs: []string{"ManagedClusterAddOn c1/gpu", `"addon.open-cluster-management.io/v2"`},
		},
		"unknown desired version": {
			obj:      `{"apiVersion":"addon.open-cluster-management.io/v1alpha1","kind":"ManagedClusterAddOn","metadata":{"namespace":"c1","name":"gpu"}}`,
			to:       "addon.open-cluster-management.io/v9",
			wantErrs: []string{"ManagedClusterAddOn c1/gpu", `"addon.open-cluster-management.io/v9"`},
		},
		"not an object": {
			obj:      `[1,2]`,
			to:       V1beta1,
			wantErrs: []string{`object "[1,2]"`, "not a JSON object"},
		},
		"a field of the wrong type": {
			obj:      `{"apiVersion":"addon.open-cluster-management.io/v1alpha1","kind":"ManagedClusterAddOn","metadata":{"namespace":"c1","name":"gpu"},"spec":{"configs":"x"}}`,
			to:       V1beta1,
			wantErrs: []string{"ManagedClusterAddOn c1/gpu"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Convert([]byte(tc.obj), tc.to)
			if err == nil {
				t.Fatal("Convert() succeeded, want an error")
			}
			for _, want := range tc.wantErrs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

func TestConvertSameVersionUnchanged(t *testing.T) {
	obj := `{"apiVersion":"addon.open-cluster-management.io/v1beta1","kind":"ManagedClusterAddOn","metadata":{"name":"gpu"},"unknown":1}`
	got, err := Convert([]byte(obj), V1beta1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(obj, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
