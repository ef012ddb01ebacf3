package webhook

import (
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/utils/ptr"
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
	c := Configuration(Endpoint{URL: "https://127.0.0.1:9443"}, []byte("CA"))
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
		{
			Name: ClaimsWebhookName, URL: "https://127.0.0.1:9443/validate-managedclusters", CABundle: "CA",
			FailurePolicy: "Fail", SideEffects: "None", Operations: []string{"UPDATE"},
			Groups: []string{"cluster.open-cluster-management.io"}, Versions: []string{"v1"}, Res: []string{"managedclusters/status"},
		},
		{
			Name: FederatedLearningWebhookName, URL: "https://127.0.0.1:9443/validate-federatedlearnings", CABundle: "CA",
			FailurePolicy: "Fail", SideEffects: "None", Operations: []string{"CREATE", "UPDATE"},
			Groups: []string{"federation-ai.open-cluster-management.io"}, Versions: []string{"v1alpha1"}, Res: []string{"federatedlearnings"},
		},
		{
			Name: ManagedServiceAccountWebhookName, URL: "https://127.0.0.1:9443/validate-managedserviceaccounts", CABundle: "CA",
			FailurePolicy: "Fail", SideEffects: "None", Operations: []string{"CREATE"},
			Groups: []string{"authentication.open-cluster-management.io"}, Versions: []string{"v1beta1"}, Res: []string{"managedserviceaccounts"},
		},
		{
			Name: PolicyWebhookName, URL: "https://127.0.0.1:9443/validate-policies", CABundle: "CA",
			FailurePolicy: "Fail", SideEffects: "None", Operations: []string{"CREATE", "UPDATE"},
			Groups: []string{"policy.open-cluster-management.io"}, Versions: []string{"v1"}, Res: []string{"policies"},
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

func TestConfigurationBehindService(t *testing.T) {
	svc := &ServiceRef{Namespace: "open-cluster-management-hub", Name: "flotilla-hub-webhook", Port: 443}
	c := Configuration(Endpoint{Service: svc}, []byte("CA"))
	for _, h := range c.Webhooks {
		want := admissionregistrationv1.WebhookClientConfig{CABundle: []byte("CA"), Service: &admissionregistrationv1.ServiceReference{
			Namespace: svc.Namespace, Name: svc.Name, Port: ptr.To[int32](443), Path: h.ClientConfig.Service.Path,
		}}
		if diff := cmp.Diff(want, h.ClientConfig); diff != "" {
			t.Errorf("webhook %s: client config (-want +got):\n%s", h.Name, diff)
		}
		if h.ClientConfig.URL != nil || ptr.Deref(h.ClientConfig.Service.Path, "") == "" {
			t.Errorf("webhook %s: want a Service with a path and no URL, got %+v", h.Name, h.ClientConfig)
		}
	}
	conv := Endpoint{Service: svc}.conversion(ConversionPath, []byte("CA"))
	if conv.URL != nil || conv.Service == nil || *conv.Service.Path != ConversionPath || *conv.Service.Port != 443 {
		t.Errorf("conversion client config = %+v, want the Service at %s", conv, ConversionPath)
	}
}

func TestParseServiceRef(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    *ServiceRef
		wantErr string
	}{
		"default port":   {in: "ns/svc", want: &ServiceRef{Namespace: "ns", Name: "svc", Port: 443}},
		"explicit port":  {in: "ns/svc:8443", want: &ServiceRef{Namespace: "ns", Name: "svc", Port: 8443}},
		"no namespace":   {in: "svc", wantErr: "no namespace"},
		"port too large": {in: "ns/svc:70000", wantErr: "not a number from 1 to 65535"},
		"port zero":      {in: "ns/svc:0", wantErr: "not a number from 1 to 65535"},
		"bad namespace":  {in: "Ns/svc", wantErr: "namespace is not a DNS label"},
		"bad name":       {in: "ns/1svc", wantErr: "Service name is not a DNS-1035 label"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseServiceRef("--webhook-service", tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "--webhook-service") {
					t.Fatalf("error = %v, want one naming --webhook-service and %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
