package clusteridentity

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"
)

func request(t *testing.T, cn string, orgs ...string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: orgs}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func TestCheckRequest(t *testing.T) {
	cases := map[string]struct {
		req         []byte
		wantCluster string
		wantErr     string
	}{
		"agent identity": {
			req:         request(t, User("gpu-east", "a1"), Groups("gpu-east")...),
			wantCluster: "gpu-east",
		},
		"groups in another order": {
			req:         request(t, User("gpu-east", "a1"), ManagedClustersGroup, Group("gpu-east")),
			wantCluster: "gpu-east",
		},
		"not PEM": {req: []byte("hello"), wantErr: "not a PEM certificate request"},
		"wrong common name": {
			req:     request(t, "system:admin", Groups("gpu-east")...),
			wantErr: `common name "system:admin"`,
		},
		"no agent id": {
			req:     request(t, "system:open-cluster-management:gpu-east", Groups("gpu-east")...),
			wantErr: "is not system:open-cluster-management:<cluster>:<agent>",
		},
		"another cluster's group": {
			req:     request(t, User("gpu-east", "a1"), Group("gpu-west"), ManagedClustersGroup),
			wantErr: "are not the agent groups",
		},
		"an extra group": {
			req:     request(t, User("gpu-east", "a1"), append(Groups("gpu-east"), "system:masters")...),
			wantErr: "are not the agent groups",
		},
		// An add-on agent's identity with the groups of an agent of cluster "cluster".
		"an add-on agent's identity": {
			req:     request(t, AddOnUser("gpu-east", "scorer", "a1"), Groups("cluster")...),
			wantErr: "with a cluster name other than managed-clusters, cluster, addon",
		},
		"cluster managed-clusters": {
			req:     request(t, User("managed-clusters", "a1"), Groups("managed-clusters")...),
			wantErr: "with a cluster name other than managed-clusters, cluster, addon",
		},
		"cluster addon": {
			req:     request(t, User("addon", "a1"), Groups("addon")...),
			wantErr: "with a cluster name other than managed-clusters, cluster, addon",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cluster, _, err := CheckRequest(tc.req)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || cluster != tc.wantCluster {
				t.Fatalf("CheckRequest = %q, %v; want %q, nil", cluster, err, tc.wantCluster)
			}
		})
	}
}

func TestNewRequestIsWhatCheckRequestAccepts(t *testing.T) {
	req, key, err := NewRequest("gpu-east", "a1")
	if err != nil {
		t.Fatal(err)
	}
	if key == nil {
		t.Fatal("no key")
	}
	cluster, agentID, err := CheckRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	if cluster != "gpu-east" || agentID != "a1" {
		t.Errorf("CheckRequest(NewRequest(gpu-east, a1)) = %q, %q; want gpu-east, a1", cluster, agentID)
	}
}
