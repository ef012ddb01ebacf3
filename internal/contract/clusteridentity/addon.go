package clusteridentity

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
)

// An add-on's agent on a managed cluster has an identity of its own on the hub, as OCM names it:
// user system:open-cluster-management:cluster:<cluster>:addon:<addon>:agent:<agent> in the
// groups of AddOnGroups. The spoke's agent requests its certificate (internal/agent/addon) and the
// hub approves it (internal/hub/addonregistration); both use these names.

// AddOnNameLabel on a CertificateSigningRequest names the add-on it is for, as OCM labels it.
const AddOnNameLabel = "open-cluster-management.io/addon-name"

// AuthenticatedGroup is the group the API server gives every authenticated user; OCM puts it in
// an add-on certificate's organizations.
const AuthenticatedGroup = "system:authenticated"

// AddOnClusterGroup is the group of one add-on's agents on one cluster.
func AddOnClusterGroup(cluster, addon string) string {
	return prefix + "cluster:" + cluster + ":addon:" + addon
}

// AddOnGroup is the group of one add-on's agents on every cluster.
func AddOnGroup(addon string) string { return prefix + "addon:" + addon }

// AddOnUser is the user name of an add-on's agent on a cluster.
func AddOnUser(cluster, addon, agent string) string {
	return AddOnClusterGroup(cluster, addon) + ":agent:" + agent
}

// AddOnGroups are the organizations of an add-on agent's certificate, as OCM's default groups.
func AddOnGroups(cluster, addon string) []string {
	return []string{AddOnClusterGroup(cluster, addon), AddOnGroup(addon), AuthenticatedGroup}
}

// AddOnDNSName is the subject alternative name OCM's agent puts in an add-on's request.
func AddOnDNSName(addon string) string { return addon + ".addon.open-cluster-management.io" }

// ParseAddOnUser splits an add-on agent's user name into cluster, add-on and agent.
func ParseAddOnUser(user string) (cluster, addon, agent string, ok bool) {
	rest, found := strings.CutPrefix(user, prefix+"cluster:")
	if !found {
		return "", "", "", false
	}
	cluster, rest, found = strings.Cut(rest, ":addon:")
	if !found || cluster == "" || strings.Contains(cluster, ":") {
		return "", "", "", false
	}
	addon, agent, found = strings.Cut(rest, ":agent:")
	if !found || addon == "" || agent == "" || strings.Contains(addon, ":") {
		return "", "", "", false
	}
	return cluster, addon, agent, true
}

// AddOnRequest is what an add-on certificate request asks for.
type AddOnRequest struct {
	Cluster, AddOn, Agent string
	// Subject is the request's subject, as it asks.
	Subject pkix.Name
}

// CheckAddOnRequest parses a PEM certificate request and checks that it asks for exactly an
// add-on agent's identity: the common name of AddOnUser, the organizations of AddOnGroups (in any
// order), no organizational units, and no subject alternative name but AddOnDNSName.
func CheckAddOnRequest(requestPEM []byte) (*AddOnRequest, error) {
	block, _ := pem.Decode(requestPEM)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, fmt.Errorf("the request is not a PEM certificate request")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parsing the certificate request: %w", err)
	}
	cluster, addon, agent, ok := ParseAddOnUser(req.Subject.CommonName)
	if !ok {
		return nil, fmt.Errorf("common name %q is not %scluster:<cluster>:addon:<addon>:agent:<agent>", req.Subject.CommonName, prefix)
	}
	got := slices.Sorted(slices.Values(req.Subject.Organization))
	want := slices.Sorted(slices.Values(AddOnGroups(cluster, addon)))
	if !slices.Equal(got, want) {
		return nil, fmt.Errorf("organizations %v are not the add-on groups %v", req.Subject.Organization, AddOnGroups(cluster, addon))
	}
	if len(req.Subject.OrganizationalUnit) > 0 {
		return nil, fmt.Errorf("organizational units %v: an add-on agent's certificate has none", req.Subject.OrganizationalUnit)
	}
	if len(req.IPAddresses)+len(req.EmailAddresses)+len(req.URIs) > 0 ||
		len(req.DNSNames) > 1 || (len(req.DNSNames) == 1 && req.DNSNames[0] != AddOnDNSName(addon)) {
		return nil, fmt.Errorf("subject alternative names other than %s: an add-on agent's client certificate has none", AddOnDNSName(addon))
	}
	return &AddOnRequest{Cluster: cluster, AddOn: addon, Agent: agent, Subject: req.Subject}, nil
}
