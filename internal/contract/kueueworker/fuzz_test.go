package kueueworker

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
)

// FuzzKubeconfig feeds the token Secret a cluster's agent writes on the hub (token, CA, server:
// all the agent's choice) through FromSecret and Kubeconfig, as the hub composes MultiKueue's
// kubeconfig from it. It must never panic, and the kubeconfig must read back as exactly the
// one cluster, user and context with the reported values: nothing the agent writes may add a
// user, an exec plugin, an auth provider or a file to the hub's kubeconfig.
func FuzzKubeconfig(f *testing.F) {
	for _, seed := range [][3]string{
		{"eyJhbGciOiJSUzI1NiJ9.e30.sig", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", "https://10.0.0.1:6443"},
		{"t\nusers:\n- name: x\n  user:\n    exec: {command: sh}\n", "ca", "https://a"},
		{"t", "ca", "https://a\ncurrent-context: evil"},
		{"\"t", "'", "{}"},
		{"t", "\x00\xff", "https://[::1]:6443"},
		{"", "ca", "https://a"},
		{"t", "ca", ""},
	} {
		f.Add(seed[0], []byte(seed[1]), seed[2])
	}
	f.Fuzz(func(t *testing.T, token string, ca []byte, server string) {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kueue-system", Name: TokenSecret("c1")},
			Data: map[string][]byte{TokenKey: []byte(token), CAKey: ca, ServerKey: []byte(server)}}
		tok, err := FromSecret(s)
		if err != nil {
			return
		}
		data, err := Kubeconfig("c1", tok.Server, tok.CA, tok.Token)
		if err != nil {
			return
		}
		cfg, err := clientcmd.Load(data)
		if err != nil {
			t.Fatalf("the composed kubeconfig does not load: %v\n%s", err, data)
		}
		if len(cfg.Clusters) != 1 || len(cfg.AuthInfos) != 1 || len(cfg.Contexts) != 1 || cfg.CurrentContext != "c1" {
			t.Fatalf("the composed kubeconfig has %d clusters, %d users, %d contexts, current %q; want one of each, c1:\n%s",
				len(cfg.Clusters), len(cfg.AuthInfos), len(cfg.Contexts), cfg.CurrentContext, data)
		}
		c, u := cfg.Clusters["c1"], cfg.AuthInfos["c1"]
		if c == nil || u == nil {
			t.Fatalf("the composed kubeconfig has no cluster or user c1:\n%s", data)
		}
		if c.Server != server || !bytes.Equal(c.CertificateAuthorityData, ca) || c.CertificateAuthority != "" || c.ProxyURL != "" || c.InsecureSkipTLSVerify {
			t.Fatalf("the composed cluster is %+v, want server %q and the CA as reported, nothing else", c, server)
		}
		if u.Token != token || u.Exec != nil || u.AuthProvider != nil || u.TokenFile != "" || u.ClientCertificate != "" ||
			u.ClientKey != "" || len(u.ClientCertificateData) > 0 || u.Username != "" || u.Impersonate != "" {
			t.Fatalf("the composed user is %+v, want only the reported token", u)
		}
	})
}
