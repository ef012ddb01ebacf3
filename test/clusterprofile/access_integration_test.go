//go:build integration

package clusterprofile

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	mcv1alpha1 "github.com/flotilla/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/clusterprofile"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// providers is what the test checks of a profile's access providers: server by provider name, in
// each list, and the AccessProviderReady condition as "status/reason".
type providers struct {
	Access, Credential map[string]string
	Ready              string
}

func providersOf(p *mcv1alpha1.ClusterProfile) providers {
	out := providers{Access: map[string]string{}, Credential: map[string]string{}}
	for _, e := range p.Status.AccessProviders {
		out.Access[e.Name] = e.Cluster.Server
	}
	for _, e := range p.Status.CredentialProviders {
		out.Credential[e.Name] = e.Cluster.Server
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, clusterprofile.ConditionAccessProvider); c != nil {
		out.Ready = string(c.Status) + "/" + c.Reason
	}
	return out
}

// waitProviders waits until profile ns/name shows want, and returns it.
func waitProviders(t *testing.T, c client.Client, ns, name string, want providers) *mcv1alpha1.ClusterProfile {
	t.Helper()
	p := &mcv1alpha1.ClusterProfile{}
	testenv.WaitFor(t, wait, fmt.Sprintf("the access providers of ClusterProfile %s/%s", ns, name), func(ctx context.Context) (bool, string, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			return false, "no profile", client.IgnoreNotFound(err)
		}
		diff := cmp.Diff(want, providersOf(p))
		return diff == "", "(-want +got)\n" + diff, nil
	})
	return p
}

// TestAccessProviders: the hub's access provider follows the cluster's acceptance and address,
// leaves other writers' providers alone, and is one client-go can use as it stands.
func TestAccessProviders(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	c := hubClient(t, env)
	startControllers(t, env)
	const set, name = "cp-access", "cp-access-1"
	ns := env.NewBoundSet(t, c, set).Namespace
	joinedCluster(t, c, name, set, "v1.37.2")
	// The "cluster" is the test's API server: a consumer of the profile can then really connect.
	server := env.Hub.RESTConfig()
	none := map[string]string{}
	ours := map[string]string{clusterprofile.ProviderName: server.Host}

	t.Run("a cluster not accepted has no provider", func(t *testing.T) {
		updateCluster(t, c, name, func(mc *clusterv1.ManagedCluster) {
			mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: server.Host, CABundle: server.CAData}}
		}, false)
		waitProviders(t, c, ns, name, providers{Access: none, Credential: none, Ready: "False/NotAccepted"})
	})

	t.Run("accepted: the provider names the address and CA, and client-go connects with them", func(t *testing.T) {
		updateCluster(t, c, name, func(mc *clusterv1.ManagedCluster) { mc.Spec.HubAcceptsClient = true }, false)
		p := waitProviders(t, c, ns, name, providers{Access: ours, Credential: ours, Ready: "True/ClientConfigured"})
		e := p.Status.AccessProviders[0]
		ext := map[string]string{}
		if len(e.Cluster.Extensions) != 1 || e.Cluster.Extensions[0].Name != clusterprofile.ExecExtensionName ||
			json.Unmarshal(e.Cluster.Extensions[0].Extension.Raw, &ext) != nil || ext["clusterName"] != name {
			t.Fatalf("extensions = %+v, want %s with clusterName %s", e.Cluster.Extensions, clusterprofile.ExecExtensionName, name)
		}
		// A consumer puts the provider's cluster into its configuration and its plugin's
		// credentials beside it (here the test's own).
		cfg := rest.CopyConfig(server)
		cfg.Host, cfg.CAFile, cfg.CAData = e.Cluster.Server, "", e.Cluster.CertificateAuthorityData
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.Discovery().ServerVersion(); err != nil {
			t.Errorf("connecting as the access provider says: %v", err)
		}
		// Without the provider's CA the same request fails: the CA is what makes it work.
		cfg.CAData = nil
		if cs, err = kubernetes.NewForConfig(cfg); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.Discovery().ServerVersion(); err == nil {
			t.Error("connecting without the provider's CA succeeded; the test shows nothing about the CA")
		}
	})

	t.Run("another writer's provider is kept", func(t *testing.T) {
		p := &mcv1alpha1.ClusterProfile{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFromWithOptions(p.DeepCopy(), client.MergeFromWithOptimisticLock{})
		theirs := mcv1alpha1.AccessProvider{Name: "kubeconfig", Cluster: &mcv1alpha1.ClusterConnection{Server: "https://proxy.example.com/" + name}}
		p.Status.AccessProviders = append(p.Status.AccessProviders, theirs)
		p.Status.CredentialProviders = append(p.Status.CredentialProviders, theirs)
		if err := c.Status().Patch(context.Background(), p, patch); err != nil {
			t.Fatal(err)
		}
		both := map[string]string{clusterprofile.ProviderName: server.Host, "kubeconfig": theirs.Cluster.Server}
		waitProviders(t, c, ns, name, providers{Access: both, Credential: both, Ready: "True/ClientConfigured"})
		// A change of the cluster rewrites the hub's entry only.
		updateCluster(t, c, name, func(mc *clusterv1.ManagedCluster) {
			mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: "https://169.254.169.254", CABundle: server.CAData}}
		}, false)
		theirsOnly := map[string]string{"kubeconfig": theirs.Cluster.Server}
		waitProviders(t, c, ns, name, providers{Access: theirsOnly, Credential: theirsOnly, Ready: "False/AddressRefused"})
	})

	t.Run("a denied cluster loses the hub's provider", func(t *testing.T) {
		updateCluster(t, c, name, func(mc *clusterv1.ManagedCluster) {
			mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: server.Host, CABundle: server.CAData}}
		}, false)
		both := map[string]string{clusterprofile.ProviderName: server.Host, "kubeconfig": "https://proxy.example.com/" + name}
		waitProviders(t, c, ns, name, providers{Access: both, Credential: both, Ready: "True/ClientConfigured"})
		updateCluster(t, c, name, func(mc *clusterv1.ManagedCluster) { mc.Spec.HubAcceptsClient = false }, false)
		theirsOnly := map[string]string{"kubeconfig": "https://proxy.example.com/" + name}
		waitProviders(t, c, ns, name, providers{Access: theirsOnly, Credential: theirsOnly, Ready: "False/NotAccepted"})
	})
}
