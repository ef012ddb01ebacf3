package clusteridentity

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
)

const (
	// prefix starts every agent user and group name.
	prefix = "system:open-cluster-management:"
	// ManagedClustersGroup holds every registered agent.
	ManagedClustersGroup = prefix + "managed-clusters"
	// ClusterNameLabel on a CertificateSigningRequest names the cluster that asked for it.
	ClusterNameLabel = "open-cluster-management.io/cluster-name"
)

// ReservedClusterNames may not name a managed cluster: a cluster's agents are known by names made
// of the cluster's name (Group, User), and under these the names would be, or would be read as,
// identities that are not that cluster's.
//   - managed-clusters: its group would be ManagedClustersGroup, which every agent has, so
//     whatever the hub granted the cluster would go to every cluster's agents.
//   - cluster: its agents' user names, system:open-cluster-management:cluster:<agent>, would
//     include every add-on agent's (AddOnUser: cluster:<c>:addon:<a>:agent:<x>), so an agent of
//     it could ask for an add-on's identity on any cluster, and an add-on agent could pass for it.
//   - addon: its agents' user names, system:open-cluster-management:addon:<agent>, would be the
//     names of add-on groups (AddOnGroup).
var ReservedClusterNames = []string{"managed-clusters", "cluster", "addon"}

// Reserved reports whether cluster is one of ReservedClusterNames.
func Reserved(cluster string) bool { return slices.Contains(ReservedClusterNames, cluster) }

// Group is the group of one cluster's agents.
func Group(cluster string) string { return prefix + cluster }

// User is the user name of one agent of a cluster.
func User(cluster, agentID string) string { return prefix + cluster + ":" + agentID }

// Groups are the groups in an agent's certificate, in order.
func Groups(cluster string) []string { return []string{Group(cluster), ManagedClustersGroup} }

// ClusterRoleName names the cluster-scoped role of a cluster's agents.
func ClusterRoleName(cluster string) string {
	return "open-cluster-management:managedcluster:" + cluster
}

// RoleName names the role of a cluster's agents in the cluster's namespace on the hub.
func RoleName(cluster string) string {
	return "open-cluster-management:managedcluster:" + cluster + ":agent"
}

// ParseUser splits an agent user name into cluster and agent id. A name whose cluster part is
// reserved is no agent's: an add-on agent's user name (AddOnUser) would otherwise parse as an
// agent of cluster "cluster".
func ParseUser(user string) (cluster, agentID string, ok bool) {
	rest, found := strings.CutPrefix(user, prefix)
	if !found {
		return "", "", false
	}
	cluster, agentID, ok = strings.Cut(rest, ":")
	if !ok || cluster == "" || agentID == "" || Reserved(cluster) {
		return "", "", false
	}
	return cluster, agentID, true
}

// NewRequest makes a PEM certificate request for the identity of agent agentID of cluster, with a
// new P-256 key: what CheckRequest accepts. The agent files it to register and to renew.
func NewRequest(cluster, agentID string) (requestPEM []byte, key *ecdsa.PrivateKey, err error) {
	key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: User(cluster, agentID), Organization: Groups(cluster)},
	}, key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), key, nil
}

// CheckRequest parses a PEM certificate request and checks that it asks for an agent identity:
// common name system:open-cluster-management:<cluster>:<agent> and exactly the agent groups. It
// returns the cluster and agent id.
func CheckRequest(requestPEM []byte) (cluster, agentID string, err error) {
	block, _ := pem.Decode(requestPEM)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return "", "", fmt.Errorf("the request is not a PEM certificate request")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return "", "", fmt.Errorf("parsing the certificate request: %w", err)
	}
	cluster, agentID, ok := ParseUser(req.Subject.CommonName)
	if !ok {
		return "", "", fmt.Errorf("common name %q is not %s<cluster>:<agent> with a cluster name other than %s",
			req.Subject.CommonName, prefix, strings.Join(ReservedClusterNames, ", "))
	}
	got := slices.Sorted(slices.Values(req.Subject.Organization))
	want := slices.Sorted(slices.Values(Groups(cluster)))
	if !slices.Equal(got, want) {
		return "", "", fmt.Errorf("organizations %v are not the agent groups %v", req.Subject.Organization, Groups(cluster))
	}
	return cluster, agentID, nil
}
