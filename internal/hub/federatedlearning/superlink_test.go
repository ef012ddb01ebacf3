package federatedlearning

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/ssh"
)

// Node ports are in the API server's default range, the same for the same federation, and walk
// on (wrapping) as ports are taken.
func TestCandidatePort(t *testing.T) {
	a, b := makeFL("a").Obj(), makeFL("b").Obj()
	if first, again := candidatePort(a, 0), candidatePort(makeFL("a").Obj(), 0); first != again {
		t.Fatalf("candidatePort is not deterministic: %d, then %d", first, again)
	}
	if candidatePort(a, 0) == candidatePort(b, 0) {
		t.Logf("a and b start at the same port %d (possible; the allocation walks on)", candidatePort(a, 0))
	}
	seen := map[int32]bool{}
	for i := 0; i < nodePortCount; i++ {
		p := candidatePort(a, i)
		if p < nodePortFirst || p >= nodePortFirst+nodePortCount {
			t.Fatalf("candidatePort(a, %d) = %d, outside %d-%d", i, p, nodePortFirst, nodePortFirst+nodePortCount-1)
		}
		seen[p] = true
	}
	if len(seen) != nodePortCount {
		t.Errorf("the walk covers %d ports, want every one of %d", len(seen), nodePortCount)
	}
}

// The front's certificate names the Service and the host the clusters reach; it is made again
// for another host and near its end.
func TestLinkMaterialCertificate(t *testing.T) {
	fl := makeFL("mnist").Obj()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	m, err := newLinkMaterial(fl, "127.0.2.1", now)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		host string
		at   time.Time
		want string // a substring of the problem; "" for none
	}{
		"fresh":                  {host: "127.0.2.1", at: now},
		"another host":           {host: "hub.example.com", at: now, want: "names"},
		"two thirds of its life": {host: "127.0.2.1", at: now.Add(250 * 24 * time.Hour), want: "expires"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := m.certProblem(fl, tc.host, tc.at)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("certProblem = %q, want one containing %q", got, tc.want)
			}
		})
	}
	block, _ := pem.Decode(m.Cert)
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"mnist-superlink", "mnist-superlink.fl", "mnist-superlink.fl.svc", "mnist-superlink.fl.svc.cluster.local"}
	if diff := cmp.Diff(want, leaf.DNSNames); diff != "" || len(leaf.IPAddresses) != 1 || leaf.IPAddresses[0].String() != "127.0.2.1" {
		t.Errorf("certificate names %v %v (-want +got DNS):\n%s", leaf.DNSNames, leaf.IPAddresses, diff)
	}
	if len(m.SuperExec) != 64 || len(m.ControlToken) != 64 || string(m.SuperExec) == string(m.ControlToken) {
		t.Errorf("secrets %q %q: want two distinct 32-byte hex strings", m.SuperExec, m.ControlToken)
	}
}

// A SuperNode key is an OpenSSH ECDSA P-256 private key (flower-supernode's
// --auth-supernode-private-key) whose public key is the PEM SubjectPublicKeyInfo Flower registers.
func TestNodeKey(t *testing.T) {
	k, err := newNodeKey()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(k), "-----BEGIN OPENSSH PRIVATE KEY-----\n") {
		t.Fatalf("key is not OpenSSH PEM:\n%s", k)
	}
	raw, err := ssh.ParseRawPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	priv := raw.(*ecdsa.PrivateKey)
	pub, err := nodePublicKey(k)
	if err != nil {
		t.Fatal(err)
	}
	block, rest := pem.Decode(pub)
	if block == nil || block.Type != "PUBLIC KEY" || len(rest) != 0 {
		t.Fatalf("public key is not one PEM PUBLIC KEY block:\n%s", pub)
	}
	got, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !priv.PublicKey.Equal(got) {
		t.Error("the public key is not the private key's")
	}
	if _, err := nodePublicKey([]byte("not a key")); err == nil {
		t.Error("nodePublicKey of garbage: no error")
	}
}

// The Secret's data and linkMaterial convert both ways; a key named only "node." is no node's.
func TestLinkMaterialSecretData(t *testing.T) {
	m := &linkMaterial{CA: []byte("ca"), Cert: []byte("c"), Key: []byte("k"), SuperExec: []byte("s"), ControlToken: []byte("t"),
		Nodes: map[string][]byte{"spoke-1": []byte("n1"), "spoke-2": []byte("n2")}}
	d := m.secretData()
	d["node."] = []byte("stray")
	if diff := cmp.Diff(m, readLinkMaterial(d)); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// What a client cluster runs for a federation: its own key, the federation's CA, the SuperLink
// at the hub's host and the federation's port, the cluster named in the node config.
func TestSuperNodeObjects(t *testing.T) {
	fl := makeFL("mnist").Obj()
	m := &linkMaterial{CA: []byte("ca"), SuperExec: []byte("s"), Nodes: map[string][]byte{"spoke-1": []byte("n1"), "spoke-2": []byte("n2")}}
	cases := map[string]struct {
		host string
		want string
	}{
		"IPv4": {host: "127.0.2.1", want: "127.0.2.1:31000"},
		"name": {host: "hub.example.com", want: "hub.example.com:31000"},
		"IPv6": {host: "2001:db8::1", want: "[2001:db8::1]:31000"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sec, d, svc := superNodeObjects(fl, SuperLinks{Host: tc.host, SuperNodeImage: "flwr/supernode:1.42.0"}, "flower-addon", "spoke-1", 31000, m)
			if diff := cmp.Diff(map[string][]byte{"node.key": []byte("n1"), "ca.crt": []byte("ca"), "superexec": []byte("s")}, sec.Data); diff != "" {
				t.Errorf("Secret (-want +got):\n%s", diff)
			}
			want := []string{"--isolation", "process", "--superlink", tc.want,
				"--root-certificates", "/etc/flower/supernode/ca.crt", "--auth-supernode-private-key", "/etc/flower/supernode/node.key",
				"--superexec-auth-secret-file", "/etc/flower/supernode/superexec", "--host", "0.0.0.0", "--port", "31000",
				"--node-config", `cluster-name="spoke-1"`}
			if diff := cmp.Diff(want, d.Spec.Template.Spec.Containers[0].Args); diff != "" {
				t.Errorf("SuperNode args (-want +got):\n%s", diff)
			}
			if svc.Name != "mnist-supernode" || svc.Namespace != "flower-addon" || svc.Spec.Ports[0].Port != 31000 {
				t.Errorf("Service %s/%s port %d", svc.Namespace, svc.Name, svc.Spec.Ports[0].Port)
			}
		})
	}
}

// The SuperLink listens on the pod's loopback only, with the SuperExec secret; the front alone is on the pod's address.
func TestSuperLinkDeployment(t *testing.T) {
	fl := makeFL("mnist").Obj()
	d := superLinkDeployment(fl, SuperLinks{SuperLinkImage: "flwr/superlink:1.42.0", FrontImage: "ghcr.io/flotilla/flotilla:v1"}, 31000, "h")
	got := map[string][]string{}
	for _, c := range d.Spec.Template.Spec.Containers {
		got[c.Name] = c.Args
	}
	want := map[string][]string{
		"superlink": {"--insecure", "--isolation", "process", "--host", "127.0.0.1", "--port", "31000",
			"--superexec-auth-secret-file", "/etc/flower/superlink/superexec"},
		"front": {"flower-front", "--listen", "$(POD_IP):31000", "--upstream", "http://127.0.0.1:31000",
			"--tls-cert-file", "/etc/flower/superlink/tls.crt", "--tls-key-file", "/etc/flower/superlink/tls.key",
			"--control-token-file", "/etc/flower/superlink/control-token"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("containers' args (-want +got):\n%s", diff)
	}
}
