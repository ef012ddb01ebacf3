package addon

import (
	"crypto/x509/pkix"
	"testing"

	"github.com/google/go-cmp/cmp"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
)

func TestSubject(t *testing.T) {
	const kube = addonv1alpha1.KubeAPIServerClientSignerName
	cases := map[string]struct {
		reg  addonv1alpha1.RegistrationConfig
		want pkix.Name
	}{
		"kube-apiserver client, no subject: OCM's default user and groups": {
			reg: addonv1alpha1.RegistrationConfig{SignerName: kube},
			want: pkix.Name{
				CommonName: "system:open-cluster-management:cluster:gpu-east:addon:scorer:agent:a1",
				Organization: []string{
					"system:open-cluster-management:cluster:gpu-east:addon:scorer",
					"system:open-cluster-management:addon:scorer",
					"system:authenticated",
				},
			},
		},
		"kube-apiserver client, groups given": {
			reg: addonv1alpha1.RegistrationConfig{SignerName: kube, Subject: &addonv1alpha1.Subject{Groups: []string{"g1"}, OrganizationUnits: []string{"ou"}}},
			want: pkix.Name{
				CommonName:   "system:open-cluster-management:cluster:gpu-east:addon:scorer:agent:a1",
				Organization: []string{"g1"}, OrganizationalUnit: []string{"ou"},
			},
		},
		"custom signer, no subject: default user, no groups": {
			reg:  addonv1alpha1.RegistrationConfig{SignerName: "example.com/scorer"},
			want: pkix.Name{CommonName: "system:open-cluster-management:cluster:gpu-east:addon:scorer:agent:a1"},
		},
		"custom signer, user given": {
			reg:  addonv1alpha1.RegistrationConfig{SignerName: "example.com/scorer", Subject: &addonv1alpha1.Subject{User: "scorer"}},
			want: pkix.Name{CommonName: "scorer"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Subject("gpu-east", "scorer", "a1", tc.reg)); diff != "" {
				t.Errorf("Subject (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSecretName(t *testing.T) {
	got := []string{SecretName("scorer", addonv1alpha1.KubeAPIServerClientSignerName), SecretName("scorer", "example.com/scorer")}
	want := []string{"scorer-hub-kubeconfig", "scorer-example.com-scorer-client-cert"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SecretName (-want +got):\n%s", diff)
	}
}

func TestInstallNamespace(t *testing.T) {
	cases := map[string]struct {
		spec, status, want string
	}{
		"status first":       {spec: "from-spec", status: "from-status", want: "from-status"},
		"then the spec":      {spec: "from-spec", want: "from-spec"},
		"then OCM's default": {want: "open-cluster-management-agent-addon"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mca := &addonv1alpha1.ManagedClusterAddOn{
				Spec:   addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: tc.spec},
				Status: addonv1alpha1.ManagedClusterAddOnStatus{Namespace: tc.status},
			}
			if diff := cmp.Diff(tc.want, InstallNamespace(mca)); diff != "" {
				t.Errorf("InstallNamespace (-want +got):\n%s", diff)
			}
		})
	}
}
