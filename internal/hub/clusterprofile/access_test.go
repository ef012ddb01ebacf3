package clusterprofile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	mcv1alpha1 "github.com/flotilla/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/apitest"
)

func TestAccessProvider(t *testing.T) {
	ca := []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	provider := func(server string, ca []byte) *mcv1alpha1.AccessProvider {
		return &mcv1alpha1.AccessProvider{Name: "open-cluster-management", Cluster: &mcv1alpha1.ClusterConnection{
			Server: server, CertificateAuthorityData: ca,
			Extensions: []mcv1alpha1.NamedExtension{{Name: "client.authentication.k8s.io/exec",
				Extension: runtime.RawExtension{Raw: []byte(`{"clusterName":"east"}`)}}},
		}}
	}
	cases := map[string]struct {
		cluster    *apitest.ClusterWrapper
		allowLocal bool
		want       *mcv1alpha1.AccessProvider
		wantCond   metav1.Condition
	}{
		"accepted, with an address and a CA": {
			cluster: apitest.MakeCluster("east").Accepted().ClientConfig("https://api.east.example.com:6443", ca),
			want:    provider("https://api.east.example.com:6443", ca),
			wantCond: metav1.Condition{Type: "AccessProviderReady", Status: metav1.ConditionTrue, Reason: ReasonClientConfigured,
				Message: "status.accessProviders open-cluster-management reaches the cluster's API server at https://api.east.example.com:6443 " +
					"(spec.managedClusterClientConfigs[0] of ManagedCluster east)"},
		},
		"without a CA: the consumer's system roots": {
			cluster: apitest.MakeCluster("east").Accepted().ClientConfig("https://api.east.example.com", nil),
			want:    provider("https://api.east.example.com", nil),
			wantCond: metav1.Condition{Type: "AccessProviderReady", Status: metav1.ConditionTrue, Reason: ReasonClientConfigured,
				Message: "status.accessProviders open-cluster-management reaches the cluster's API server at https://api.east.example.com " +
					"(spec.managedClusterClientConfigs[0] of ManagedCluster east)"},
		},
		"not accepted: no provider, whatever its address": {
			cluster: apitest.MakeCluster("east").ClientConfig("https://api.east.example.com:6443", ca),
			wantCond: metav1.Condition{Type: "AccessProviderReady", Status: metav1.ConditionFalse, Reason: ReasonNotAccepted,
				Message: "ManagedCluster east is not accepted (spec.hubAcceptsClient is false): no access provider until a hub administrator accepts it"},
		},
		"no address": {
			cluster: apitest.MakeCluster("east").Accepted(),
			wantCond: metav1.Condition{Type: "AccessProviderReady", Status: metav1.ConditionFalse, Reason: ReasonNoClientConfig,
				Message: "ManagedCluster east has no spec.managedClusterClientConfigs: a hub administrator sets the URL and CA bundle " +
					"of the cluster's API server there to give consumers an access provider"},
		},
		"a metadata address is never offered, even to a local fleet": {
			cluster:    apitest.MakeCluster("east").Accepted().ClientConfig("https://169.254.169.254", nil),
			allowLocal: true,
			wantCond: metav1.Condition{Type: "AccessProviderReady", Status: metav1.ConditionFalse, Reason: ReasonAddressRefused,
				Message: `ManagedCluster east spec.managedClusterClientConfigs[0].url: refused: 169.254.169.254 is a cloud metadata address; ` +
					`set it to an address of the cluster's API server that consumers on the hub may reach`},
		},
		"loopback refused outside a local fleet": {
			cluster: apitest.MakeCluster("east").Accepted().ClientConfig("https://127.0.0.1:6443", nil),
			wantCond: metav1.Condition{Type: "AccessProviderReady", Status: metav1.ConditionFalse, Reason: ReasonAddressRefused,
				Message: `ManagedCluster east spec.managedClusterClientConfigs[0].url: refused: 127.0.0.1 is a loopback address; ` +
					`set it to an address of the cluster's API server that consumers on the hub may reach`},
		},
		"loopback in a local fleet": {
			cluster:    apitest.MakeCluster("east").Accepted().ClientConfig("https://127.0.0.1:6443", ca),
			allowLocal: true,
			want:       provider("https://127.0.0.1:6443", ca),
			wantCond: metav1.Condition{Type: "AccessProviderReady", Status: metav1.ConditionTrue, Reason: ReasonClientConfigured,
				Message: "status.accessProviders open-cluster-management reaches the cluster's API server at https://127.0.0.1:6443 " +
					"(spec.managedClusterClientConfigs[0] of ManagedCluster east)"},
		},
		"a refused address is skipped for the next": {
			cluster: apitest.MakeCluster("east").Accepted().ClientConfig("https://[fe80::1]:6443", nil).
				ClientConfig("https://api.east.example.com:6443", ca),
			want: provider("https://api.east.example.com:6443", ca),
			wantCond: metav1.Condition{Type: "AccessProviderReady", Status: metav1.ConditionTrue, Reason: ReasonClientConfigured,
				Message: "status.accessProviders open-cluster-management reaches the cluster's API server at https://api.east.example.com:6443 " +
					"(spec.managedClusterClientConfigs[1] of ManagedCluster east)"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, cond := accessProvider(tc.cluster.Obj(), tc.allowLocal)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("accessProvider() provider (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCond, cond); diff != "" {
				t.Errorf("accessProvider() condition (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergeStatusProviders(t *testing.T) {
	now := metav1.Now()
	ours := func(server string) mcv1alpha1.AccessProvider {
		return mcv1alpha1.AccessProvider{Name: ProviderName, Cluster: &mcv1alpha1.ClusterConnection{Server: server}}
	}
	theirs := mcv1alpha1.AccessProvider{Name: "kubeconfig", Cluster: &mcv1alpha1.ClusterConnection{Server: "https://proxy.example.com/east"}}
	cases := map[string]struct {
		cur, want   []mcv1alpha1.AccessProvider
		wantOut     []mcv1alpha1.AccessProvider
		wantChanged bool
	}{
		"added beside another writer's":  {cur: []mcv1alpha1.AccessProvider{theirs}, want: []mcv1alpha1.AccessProvider{ours("https://a")}, wantOut: []mcv1alpha1.AccessProvider{theirs, ours("https://a")}, wantChanged: true},
		"replaced":                       {cur: []mcv1alpha1.AccessProvider{ours("https://old"), theirs}, want: []mcv1alpha1.AccessProvider{ours("https://a")}, wantOut: []mcv1alpha1.AccessProvider{theirs, ours("https://a")}, wantChanged: true},
		"up to date":                     {cur: []mcv1alpha1.AccessProvider{theirs, ours("https://a")}, want: []mcv1alpha1.AccessProvider{ours("https://a")}, wantOut: []mcv1alpha1.AccessProvider{theirs, ours("https://a")}},
		"removed; another writer's kept": {cur: []mcv1alpha1.AccessProvider{ours("https://a"), theirs}, wantOut: []mcv1alpha1.AccessProvider{theirs}, wantChanged: true},
		"none before, none now":          {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cur := mcv1alpha1.ClusterProfileStatus{AccessProviders: tc.cur, CredentialProviders: tc.cur}
			want := mcv1alpha1.ClusterProfileStatus{AccessProviders: tc.want, CredentialProviders: tc.want}
			got, changed := mergeStatus(cur, want, 1, now)
			if diff := cmp.Diff(tc.wantOut, got.AccessProviders); diff != "" {
				t.Errorf("mergeStatus() accessProviders (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantOut, got.CredentialProviders); diff != "" {
				t.Errorf("mergeStatus() credentialProviders (-want +got):\n%s", diff)
			}
			if changed != tc.wantChanged {
				t.Errorf("mergeStatus() changed = %v, want %v", changed, tc.wantChanged)
			}
		})
	}
}
