package addon

import (
	"crypto/x509/pkix"
	"slices"
	"strings"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
)

// DefaultInstallNamespace is where an add-on's agent runs on the spoke when its
// ManagedClusterAddOn names no namespace, as in OCM.
const DefaultInstallNamespace = "open-cluster-management-agent-addon"

// InstallNamespace is the namespace on the spoke that holds an add-on's agent, its hub
// credentials and its health Lease, read as OCM's agent reads it: status.namespace (set by the
// add-on's hub controller), else spec.installNamespace, else DefaultInstallNamespace.
func InstallNamespace(mca *addonv1alpha1.ManagedClusterAddOn) string {
	switch {
	case mca.Status.Namespace != "":
		return mca.Status.Namespace
	case mca.Spec.InstallNamespace != "":
		return mca.Spec.InstallNamespace
	}
	return DefaultInstallNamespace
}

// SecretName is the Secret on the spoke that holds an add-on's credentials for signer, as OCM
// names it: <addon>-hub-kubeconfig for the kube-apiserver client signer, else
// <addon>-<signer with "/" as "-">-client-cert.
func SecretName(addon, signer string) string {
	if signer == addonv1alpha1.KubeAPIServerClientSignerName {
		return addon + "-hub-kubeconfig"
	}
	return addon + "-" + strings.ReplaceAll(signer, "/", "-") + "-client-cert"
}

// Subject is the certificate subject the agent requests for a registration of an add-on: the
// registration's subject, with OCM's defaults for what it leaves out (the user of
// clusteridentity.AddOnUser; for the kube-apiserver client signer the groups of
// clusteridentity.AddOnGroups, for other signers none).
func Subject(cluster, addon, agentID string, reg addonv1alpha1.RegistrationConfig) pkix.Name {
	var s addonv1alpha1.Subject
	if reg.Subject != nil {
		s = *reg.Subject
	}
	name := pkix.Name{
		CommonName:         s.User,
		Organization:       slices.Clone(s.Groups),
		OrganizationalUnit: slices.Clone(s.OrganizationUnits),
	}
	if name.CommonName == "" {
		name.CommonName = clusteridentity.AddOnUser(cluster, addon, agentID)
	}
	if len(name.Organization) == 0 && reg.SignerName == addonv1alpha1.KubeAPIServerClientSignerName {
		name.Organization = clusteridentity.AddOnGroups(cluster, addon)
	}
	return name
}

// sameSubject reports whether a certificate's subject is what the agent asks for; the order of
// groups and units does not matter.
func sameSubject(got, want pkix.Name) bool {
	return got.CommonName == want.CommonName &&
		slices.Equal(slices.Sorted(slices.Values(got.Organization)), slices.Sorted(slices.Values(want.Organization))) &&
		slices.Equal(slices.Sorted(slices.Values(got.OrganizationalUnit)), slices.Sorted(slices.Values(want.OrganizationalUnit)))
}
