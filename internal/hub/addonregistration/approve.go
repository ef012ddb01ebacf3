package addonregistration

import (
	"fmt"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
)

// allowedUsages are the key usages an add-on agent's client certificate may carry.
var allowedUsages = []certificatesv1.KeyUsage{
	certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth,
}

// addOnRequest checks that csr asks the kube-apiserver-client signer for an add-on agent's
// identity, filed by an agent of that cluster. It returns what the request asks for, or why it
// is not an add-on request this hub approves.
func addOnRequest(csr *certificatesv1.CertificateSigningRequest) (*clusteridentity.AddOnRequest, error) {
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return nil, fmt.Errorf("signer %q is not %s", csr.Spec.SignerName, certificatesv1.KubeAPIServerClientSignerName)
	}
	req, err := clusteridentity.CheckAddOnRequest(csr.Spec.Request)
	if err != nil {
		return nil, err
	}
	for _, u := range csr.Spec.Usages {
		if !slices.Contains(allowedUsages, u) {
			return nil, fmt.Errorf("usage %q is not one of a client certificate's %v", u, allowedUsages)
		}
	}
	if !slices.Contains(csr.Spec.Usages, certificatesv1.UsageClientAuth) {
		return nil, fmt.Errorf("usages %v lack %q", csr.Spec.Usages, certificatesv1.UsageClientAuth)
	}
	// The requester: an agent of the same cluster. Its user name alone would not do (an add-on
	// user also starts with system:open-cluster-management:); the groups only an agent's
	// certificate carries make it one.
	cluster, _, ok := clusteridentity.ParseUser(csr.Spec.Username)
	if !ok || cluster != req.Cluster ||
		!slices.Contains(csr.Spec.Groups, clusteridentity.Group(req.Cluster)) ||
		!slices.Contains(csr.Spec.Groups, clusteridentity.ManagedClustersGroup) {
		return nil, fmt.Errorf("filed by %q in groups %v, not by an agent of cluster %s", csr.Spec.Username, csr.Spec.Groups, req.Cluster)
	}
	return req, nil
}

// registered checks that the cluster is accepted and that mca, the add-on's ManagedClusterAddOn
// in the cluster's namespace, registers the request's signer for its subject.
func registered(req *clusteridentity.AddOnRequest, mc *clusterv1.ManagedCluster, mca *addonv1alpha1.ManagedClusterAddOn) error {
	switch {
	case mc == nil:
		return fmt.Errorf("cluster %s does not exist", req.Cluster)
	case !mc.Spec.HubAcceptsClient || !mc.DeletionTimestamp.IsZero():
		return fmt.Errorf("cluster %s is not accepted", req.Cluster)
	case mca == nil:
		return fmt.Errorf("no ManagedClusterAddOn %s/%s", req.Cluster, req.AddOn)
	case !mca.DeletionTimestamp.IsZero():
		return fmt.Errorf("ManagedClusterAddOn %s/%s is being deleted", req.Cluster, req.AddOn)
	}
	for _, r := range mca.Status.Registrations {
		if r.SignerName != certificatesv1.KubeAPIServerClientSignerName {
			continue
		}
		if s := r.Subject; s != nil {
			if s.User != "" && s.User != req.Subject.CommonName {
				return fmt.Errorf("ManagedClusterAddOn %s/%s registers user %q, the request asks for %q", req.Cluster, req.AddOn, s.User, req.Subject.CommonName)
			}
			if len(s.Groups) > 0 && !slices.Equal(slices.Sorted(slices.Values(s.Groups)), slices.Sorted(slices.Values(req.Subject.Organization))) {
				return fmt.Errorf("ManagedClusterAddOn %s/%s registers groups %v, the request asks for %v", req.Cluster, req.AddOn, s.Groups, req.Subject.Organization)
			}
		}
		return nil
	}
	return fmt.Errorf("ManagedClusterAddOn %s/%s registers no %s signer in status.registrations", req.Cluster, req.AddOn, certificatesv1.KubeAPIServerClientSignerName)
}
