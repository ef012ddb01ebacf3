package webhook

import (
	"crypto/x509"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

func TestURLHost(t *testing.T) {
	cases := map[string]struct{ host, want string }{
		"loopback":         {host: "127.0.0.1", want: "127.0.0.1"},
		"all interfaces":   {host: "", want: "127.0.0.1"},
		"all IPv4":         {host: "0.0.0.0", want: "127.0.0.1"},
		"all IPv6":         {host: "::", want: "127.0.0.1"},
		"a name":           {host: "hub.example.com", want: "hub.example.com"},
		"a specific IPv6":  {host: "::1", want: "::1"},
		"a specific IPv4 ": {host: "10.0.0.7", want: "10.0.0.7"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := urlHost(tc.host); got != tc.want {
				t.Errorf("urlHost(%q) = %q, want %q", tc.host, got, tc.want)
			}
		})
	}
}

func TestConfiguration(t *testing.T) {
	c := Configuration("https://127.0.0.1:9443", []byte("CA"))
	type hook struct {
		Name, URL, FailurePolicy, SideEffects string
		CABundle                              string
		Operations, Groups, Versions, Res     []string
	}
	var got []hook
	for _, w := range c.Webhooks {
		h := hook{
			Name: w.Name, URL: *w.ClientConfig.URL, CABundle: string(w.ClientConfig.CABundle),
			FailurePolicy: string(*w.FailurePolicy), SideEffects: string(*w.SideEffects),
		}
		for _, r := range w.Rules {
			for _, op := range r.Operations {
				h.Operations = append(h.Operations, string(op))
			}
			h.Groups, h.Versions, h.Res = append(h.Groups, r.APIGroups...), append(h.Versions, r.APIVersions...), append(h.Res, r.Resources...)
		}
		got = append(got, h)
	}
	want := []hook{
		{
			Name: ManagedClusterWebhookName, URL: "https://127.0.0.1:9443/validate-managedclusters", CABundle: "CA",
			FailurePolicy: "Fail", SideEffects: "None", Operations: []string{"CREATE", "UPDATE"},
			Groups: []string{"cluster.open-cluster-management.io"}, Versions: []string{"v1"}, Res: []string{"managedclusters"},
		},
		{
			Name: BindingWebhookName, URL: "https://127.0.0.1:9443/validate-managedclustersetbindings", CABundle: "CA",
			FailurePolicy: "Fail", SideEffects: "None", Operations: []string{"CREATE", "UPDATE"},
			Groups: []string{"cluster.open-cluster-management.io"}, Versions: []string{"v1beta2"}, Res: []string{"managedclustersetbindings"},
		},
		{
			Name: ManifestWorkWebhookName, URL: "https://127.0.0.1:9443/validate-manifestworks", CABundle: "CA",
			FailurePolicy: "Fail", SideEffects: "None", Operations: []string{"CREATE", "UPDATE"},
			Groups: []string{"work.open-cluster-management.io"}, Versions: []string{"v1"}, Res: []string{"manifestworks"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("webhooks (-want +got):\n%s", diff)
	}
	if c.Name != ConfigurationName {
		t.Errorf("name = %q, want %q", c.Name, ConfigurationName)
	}
	if *c.Webhooks[1].Rules[0].Scope != admissionregistrationv1.NamespacedScope {
		t.Errorf("binding scope = %s, want Namespaced", *c.Webhooks[1].Rules[0].Scope)
	}
}

func TestSelfSigned(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cert, caPEM, err := selfSigned(now, "hub.example.com")
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("the CA bundle holds no certificate")
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"127.0.0.1", "::1", "localhost", "hub.example.com"} {
		opts := x509.VerifyOptions{DNSName: name, Roots: roots, CurrentTime: now.Add(24 * time.Hour)}
		if _, err := leaf.Verify(opts); err != nil {
			t.Errorf("verifying the serving certificate for %s: %v", name, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "elsewhere.example.com", Roots: roots, CurrentTime: now}); err == nil {
		t.Error("the serving certificate verifies for elsewhere.example.com, want only the hub's names")
	}
}
