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

	"github.com/google/go-cmp/cmp"
)

func addOnRequestPEM(t *testing.T, subject pkix.Name, dnsNames ...string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject, DNSNames: dnsNames}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func TestAddOnNames(t *testing.T) {
	got := []string{AddOnUser("gpu-east", "scorer", "a1"), AddOnClusterGroup("gpu-east", "scorer"), AddOnGroup("scorer"), AddOnDNSName("scorer")}
	want := []string{
		"system:open-cluster-management:cluster:gpu-east:addon:scorer:agent:a1",
		"system:open-cluster-management:cluster:gpu-east:addon:scorer",
		"system:open-cluster-management:addon:scorer",
		"scorer.addon.open-cluster-management.io",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("add-on names (-want +got):\n%s", diff)
	}
}

func TestParseAddOnUser(t *testing.T) {
	type parsed struct {
		Cluster, AddOn, Agent string
		OK                    bool
	}
	cases := map[string]struct {
		user string
		want parsed
	}{
		"add-on user":          {user: AddOnUser("gpu-east", "scorer", "a1"), want: parsed{"gpu-east", "scorer", "a1", true}},
		"agent with a colon":   {user: AddOnUser("gpu-east", "scorer", "a:1"), want: parsed{"gpu-east", "scorer", "a:1", true}},
		"cluster agent":        {user: User("gpu-east", "a1")},
		"no agent":             {user: AddOnClusterGroup("gpu-east", "scorer")},
		"empty add-on":         {user: "system:open-cluster-management:cluster:gpu-east:addon::agent:a1"},
		"another prefix":       {user: "system:serviceaccount:cluster:gpu-east:addon:scorer:agent:a1"},
		"colon in add-on name": {user: "system:open-cluster-management:cluster:gpu-east:addon:a:b:agent:a1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, a, ag, ok := ParseAddOnUser(tc.user)
			if diff := cmp.Diff(tc.want, parsed{c, a, ag, ok}); diff != "" {
				t.Errorf("ParseAddOnUser(%q) (-want +got):\n%s", tc.user, diff)
			}
		})
	}
}

func TestCheckAddOnRequest(t *testing.T) {
	user := AddOnUser("gpu-east", "scorer", "a1")
	groups := AddOnGroups("gpu-east", "scorer")
	cases := map[string]struct {
		req     []byte
		want    string // cluster/addon/agent
		wantErr string
	}{
		"default subject": {
			req: addOnRequestPEM(t, pkix.Name{CommonName: user, Organization: groups}), want: "gpu-east/scorer/a1",
		},
		"with OCM's DNS name": {
			req: addOnRequestPEM(t, pkix.Name{CommonName: user, Organization: groups}, "scorer.addon.open-cluster-management.io"), want: "gpu-east/scorer/a1",
		},
		"groups in another order": {
			req:  addOnRequestPEM(t, pkix.Name{CommonName: user, Organization: []string{groups[2], groups[0], groups[1]}}),
			want: "gpu-east/scorer/a1",
		},
		"not PEM": {req: []byte("x"), wantErr: "not a PEM certificate request"},
		"a cluster agent's identity": {
			req: addOnRequestPEM(t, pkix.Name{CommonName: User("gpu-east", "a1"), Organization: Groups("gpu-east")}), wantErr: "is not system:open-cluster-management:cluster:<cluster>:addon:<addon>:agent:<agent>",
		},
		"another cluster's group": {
			req:     addOnRequestPEM(t, pkix.Name{CommonName: user, Organization: AddOnGroups("gpu-west", "scorer")}),
			wantErr: "are not the add-on groups",
		},
		"an extra group": {
			req:     addOnRequestPEM(t, pkix.Name{CommonName: user, Organization: append(groups, "system:masters")}),
			wantErr: "are not the add-on groups",
		},
		"missing system:authenticated": {
			req:     addOnRequestPEM(t, pkix.Name{CommonName: user, Organization: groups[:2]}),
			wantErr: "are not the add-on groups",
		},
		"organizational units": {
			req:     addOnRequestPEM(t, pkix.Name{CommonName: user, Organization: groups, OrganizationalUnit: []string{"x"}}),
			wantErr: "organizational units",
		},
		"another DNS name": {
			req:     addOnRequestPEM(t, pkix.Name{CommonName: user, Organization: groups}, "kubernetes.default"),
			wantErr: "subject alternative names",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := CheckAddOnRequest(tc.req)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Cluster+"/"+got.AddOn+"/"+got.Agent); diff != "" {
				t.Errorf("CheckAddOnRequest (-want +got):\n%s", diff)
			}
		})
	}
}
