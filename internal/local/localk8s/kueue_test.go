package localk8s

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kueueconfig "sigs.k8s.io/kueue/apis/config/v1beta2"
	"sigs.k8s.io/yaml"
)

const kueueWebhooksFixture = `---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- admissionReviewVersions: [v1]
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /mutate-batch-v1-job}
  failurePolicy: Fail
  name: mjob.kb.io
  sideEffects: None
- admissionReviewVersions: [v1]
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /mutate--v1-pod}
  failurePolicy: Fail
  name: mpod.kb.io
  sideEffects: None
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- admissionReviewVersions: [v1]
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /validate-batch-v1-job}
  failurePolicy: Fail
  name: vjob.kb.io
  sideEffects: None
`

func TestReadKueueWebhooks(t *testing.T) {
	type hook struct {
		Name, URL, CA string
		Service       bool
		Selected      bool
	}
	cases := map[string]struct {
		manifests string
		want      []hook
		wantErr   string
	}{
		"services become loopback URLs with the CA": {
			manifests: kueueWebhooksFixture,
			want: []hook{
				{Name: kueueMutatingName + "/mjob.kb.io", URL: "https://127.0.0.1:9443/mutate-batch-v1-job", CA: "ca"},
				{Name: kueueMutatingName + "/mpod.kb.io", URL: "https://127.0.0.1:9443/mutate--v1-pod", CA: "ca", Selected: true},
				{Name: kueueValidatingName + "/vjob.kb.io", URL: "https://127.0.0.1:9443/validate-batch-v1-job", CA: "ca"},
			},
		},
		"a webhook without a service path": {
			manifests: strings.Replace(kueueWebhooksFixture, ", path: /mutate-batch-v1-job", "", 1),
			wantErr:   "webhook mjob.kb.io has no service path",
		},
		"no validating configuration": {
			manifests: kueueWebhooksFixture[:strings.LastIndex(kueueWebhooksFixture, "---")],
			wantErr:   "lacks a MutatingWebhookConfiguration or a ValidatingWebhookConfiguration",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), KueueWebhooksFile)
			if err := os.WriteFile(path, []byte(tc.manifests), 0o644); err != nil {
				t.Fatal(err)
			}
			m, v, err := readKueueWebhooks(path, 9443, []byte("ca"))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []hook
			for _, w := range m.Webhooks {
				got = append(got, hook{m.Name + "/" + w.Name, *w.ClientConfig.URL, string(w.ClientConfig.CABundle), w.ClientConfig.Service != nil, w.NamespaceSelector != nil})
			}
			for _, w := range v.Webhooks {
				got = append(got, hook{v.Name + "/" + w.Name, *w.ClientConfig.URL, string(w.ClientConfig.CABundle), w.ClientConfig.Service != nil, w.NamespaceSelector != nil})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("webhooks (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKueueConfigCredentialsPlugin decodes the Configuration a hub's Kueue gets with a credentials
// plugin into Kueue's own type, strictly: the ClusterProfile gate is on and the plugin is the
// provider of its access provider's name, with cluster info passed (KEP-5339).
func TestKueueConfigCredentialsPlugin(t *testing.T) {
	plugin := HubPlugin("/opt/flotilla", &Cluster{Kubeconfig: "/fleet/hub/admin.kubeconfig"})
	cases := map[string]struct {
		mk        *MultiKueueOptions
		wantGate  bool
		wantExecs []kueueconfig.ClusterProfileCredentialsProvider
	}{
		"no MultiKueue":               {},
		"MultiKueue without a plugin": {mk: &MultiKueueOptions{}},
		"with the plugin": {mk: &MultiKueueOptions{CredentialsPlugin: plugin}, wantGate: true,
			wantExecs: []kueueconfig.ClusterProfileCredentialsProvider{{Name: "open-cluster-management", ExecConfig: clientcmdapi.ExecConfig{
				APIVersion: "client.authentication.k8s.io/v1", Command: "/opt/flotilla",
				Args:               []string{"credentials-plugin", "--managed-serviceaccount", "multikueue"},
				Env:                []clientcmdapi.ExecEnvVar{{Name: "KUBECONFIG", Value: "/fleet/hub/admin.kubeconfig"}},
				ProvideClusterInfo: true, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var cfg kueueconfig.Configuration
			if err := yaml.UnmarshalStrict(kueueConfig(&Kueue{}, "/certs", tc.mk), &cfg); err != nil {
				t.Fatal(err)
			}
			if got := cfg.FeatureGates["MultiKueueClusterProfile"]; got != tc.wantGate {
				t.Errorf("MultiKueueClusterProfile gate %v, want %v", got, tc.wantGate)
			}
			var got []kueueconfig.ClusterProfileCredentialsProvider
			if cfg.MultiKueue != nil && cfg.MultiKueue.ClusterProfile != nil {
				got = cfg.MultiKueue.ClusterProfile.CredentialsProviders
			}
			if diff := cmp.Diff(tc.wantExecs, got); diff != "" {
				t.Errorf("credentialsProviders (-want +got):\n%s", diff)
			}
		})
	}
}
