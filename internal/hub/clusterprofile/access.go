package clusterprofile

import (
	"encoding/json"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	multiclusterv1alpha1 "github.com/flotilla/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/egress"
)

// ProviderName is the access provider the hub writes on each of its profiles
// (multiclusterv1alpha1.AccessProviderName). The hub owns the entry of this name in
// status.accessProviders and status.credentialProviders; entries of other names are other
// writers'.
const ProviderName = multiclusterv1alpha1.AccessProviderName

// ExecExtensionName is the kubeconfig cluster extension that client-go hands to an exec
// credentials plugin as ExecCredential spec.cluster.config when the consumer sets
// provideClusterInfo (KEP-5339); the hub puts the cluster's name there, as OCM does, so the
// plugin knows which cluster it is asked about.
const ExecExtensionName = "client.authentication.k8s.io/exec"

// ConditionAccessProvider is True when the profile carries the hub's access provider, and False
// with the reason when the cluster has none a consumer may use.
const ConditionAccessProvider = "AccessProviderReady"

// Reasons of ConditionAccessProvider.
const (
	ReasonClientConfigured = "ClientConfigured"
	ReasonNotAccepted      = "NotAccepted"
	ReasonNoClientConfig   = "NoClientConfig"
	ReasonAddressRefused   = "AddressRefused"
)

// execExtension is the content of ExecExtensionName.
type execExtension struct {
	ClusterName string `json:"clusterName"`
}

// accessProvider is the hub's access provider for cluster mc, nil with the False condition when
// it has none: a cluster the hub does not accept has none (its agent's credentials are revoked,
// and consumers must not reach it through the hub's inventory), nor one without an address in
// spec.managedClusterClientConfigs. Those addresses are the cluster's registration's word (the
// agent may not change them later, docs/registration.md), and consumers on the hub dial them with
// credentials, so an address egress refuses (metadata always, loopback and link-local unless
// allowLocal) is not offered: the first address it accepts is.
func accessProvider(mc *clusterv1.ManagedCluster, allowLocal bool) (*multiclusterv1alpha1.AccessProvider, metav1.Condition) {
	c := metav1.Condition{Type: ConditionAccessProvider, Status: metav1.ConditionFalse}
	if !mc.Spec.HubAcceptsClient {
		c.Reason = ReasonNotAccepted
		c.Message = fmt.Sprintf("ManagedCluster %s is not accepted (spec.hubAcceptsClient is false): no access provider "+
			"until a hub administrator accepts it", mc.Name)
		return nil, c
	}
	var refusal string
	for i, cc := range mc.Spec.ManagedClusterClientConfigs {
		if err := egress.CheckURL(cc.URL, allowLocal); err != nil {
			if refusal == "" {
				refusal = fmt.Sprintf("ManagedCluster %s spec.managedClusterClientConfigs[%d].url: %v; set it to an address of "+
					"the cluster's API server that consumers on the hub may reach", mc.Name, i, err)
			}
			continue
		}
		ext, err := json.Marshal(execExtension{ClusterName: mc.Name})
		if err != nil {
			panic(err) // a struct of one string always marshals
		}
		c.Status, c.Reason = metav1.ConditionTrue, ReasonClientConfigured
		c.Message = fmt.Sprintf("status.accessProviders %s reaches the cluster's API server at %s (spec.managedClusterClientConfigs[%d] of ManagedCluster %s)",
			ProviderName, cc.URL, i, mc.Name)
		return &multiclusterv1alpha1.AccessProvider{Name: ProviderName, Cluster: &multiclusterv1alpha1.ClusterConnection{
			Server:                   cc.URL,
			CertificateAuthorityData: slices.Clone(cc.CABundle),
			Extensions: []multiclusterv1alpha1.NamedExtension{{Name: ExecExtensionName,
				Extension: runtime.RawExtension{Raw: ext}}},
		}}, c
	}
	if refusal != "" {
		c.Reason, c.Message = ReasonAddressRefused, refusal
		return nil, c
	}
	c.Reason = ReasonNoClientConfig
	c.Message = fmt.Sprintf("ManagedCluster %s has no spec.managedClusterClientConfigs: a hub administrator sets the URL and CA bundle "+
		"of the cluster's API server there to give consumers an access provider", mc.Name)
	return nil, c
}

// withProvider returns providers with the hub's entry (ProviderName) replaced by p, or removed
// when p is nil; the entries of other providers are kept in their order.
func withProvider(providers []multiclusterv1alpha1.AccessProvider, p *multiclusterv1alpha1.AccessProvider) []multiclusterv1alpha1.AccessProvider {
	var out []multiclusterv1alpha1.AccessProvider
	for _, e := range providers {
		if e.Name != ProviderName {
			out = append(out, *e.DeepCopy())
		}
	}
	if p != nil {
		out = append(out, *p.DeepCopy())
	}
	return out
}

// hubProvider is the hub's entry in providers, nil without one.
func hubProvider(providers []multiclusterv1alpha1.AccessProvider) *multiclusterv1alpha1.AccessProvider {
	for i := range providers {
		if providers[i].Name == ProviderName {
			return &providers[i]
		}
	}
	return nil
}
