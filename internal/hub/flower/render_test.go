package flower

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla/flotilla/internal/certs"
	"github.com/flotilla/flotilla/internal/hub/addontemplate"
)

var testNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func TestCommands(t *testing.T) {
	cases := map[string]struct {
		got, want []string
	}{
		"superlink, TLS": {got: SuperLinkArgs(true), want: []string{"--isolation", "process", "--host", "0.0.0.0", "--port", "9092",
			"--ssl-ca-certfile", "/etc/flower/tls/ca.crt", "--ssl-certfile", "/etc/flower/tls/tls.crt", "--ssl-keyfile", "/etc/flower/tls/tls.key"}},
		"superlink, insecure": {got: SuperLinkArgs(false), want: []string{"--isolation", "process", "--host", "0.0.0.0", "--port", "9092", "--insecure"}},
		"supernode, TLS": {got: SuperNodeArgs(true), want: []string{"--isolation", "process",
			"--superlink", "{{SUPERLINK_ADDRESS}}:{{SUPERLINK_PORT}}", "--host", "0.0.0.0", "--port", "9094",
			"--node-config", `cluster-name="{{CLUSTER_NAME}}"`, "--root-certificates", "/etc/flower/ca/ca.crt"}},
		"supernode, insecure": {got: SuperNodeArgs(false), want: []string{"--isolation", "process",
			"--superlink", "{{SUPERLINK_ADDRESS}}:{{SUPERLINK_PORT}}", "--host", "0.0.0.0", "--port", "9094",
			"--node-config", `cluster-name="{{CLUSTER_NAME}}"`, "--insecure"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}

// renderFor renders the hub's template and default config for cluster, as the template add-on
// controller does, and returns the rendered objects by kind.
func renderFor(t *testing.T, o Options, cluster string) (map[string]*unstructured.Unstructured, string) {
	t.Helper()
	ca, err := certs.NewCA(caCommonName, testNow, caLifetime)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := addOnTemplate(o, ca.CertPEM())
	if err != nil {
		t.Fatal(err)
	}
	out, err := addontemplate.Render(addontemplate.Input{Cluster: cluster, Addon: AddonName, Template: tmpl, Config: deploymentConfig(o)})
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string]*unstructured.Unstructured{}
	for _, m := range out.Spec.Workload.Manifests {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(m.Raw); err != nil {
			t.Fatal(err)
		}
		objs[u.GetKind()] = u
	}
	spec, err := json.Marshal(out.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return objs, string(spec)
}

// TestSuperNodeRendered: what a cluster gets from the hub's template and config, with TLS and
// without: the SuperNode's image and arguments with the variables filled in, the CA's certificate
// (only that) mounted from ConfigMap flower-ca, and the Service on 9094.
func TestSuperNodeRendered(t *testing.T) {
	cases := map[string]struct {
		opts          Options
		wantArgs      []string
		wantImage     string
		wantConfigMap bool
	}{
		"defaults: TLS, the Service's name": {
			wantArgs: []string{"--isolation", "process", "--superlink", "superlink.flower-system.svc:9092", "--host", "0.0.0.0", "--port", "9094",
				"--node-config", `cluster-name="gpu-east"`, "--root-certificates", "/etc/flower/ca/ca.crt"},
			wantImage: DefaultSuperNodeImage, wantConfigMap: true,
		},
		"external address and image, insecure": {
			opts: Options{Address: "10.0.0.5:30092", SuperNodeImage: "registry.local/flwr/supernode:1.42.0", Insecure: true},
			wantArgs: []string{"--isolation", "process", "--superlink", "10.0.0.5:30092", "--host", "0.0.0.0", "--port", "9094",
				"--node-config", `cluster-name="gpu-east"`, "--insecure"},
			wantImage: "registry.local/flwr/supernode:1.42.0",
		},
		"IPv6 address": {
			opts: Options{Address: "[2001:db8::1]:9092", Insecure: true},
			wantArgs: []string{"--isolation", "process", "--superlink", "[2001:db8::1]:9092", "--host", "0.0.0.0", "--port", "9094",
				"--node-config", `cluster-name="gpu-east"`, "--insecure"},
			wantImage: DefaultSuperNodeImage,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs, spec := renderFor(t, tc.opts, "gpu-east")
			d := &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs["Deployment"].Object, d); err != nil {
				t.Fatal(err)
			}
			if d.Namespace != SuperNodeNamespace || d.Name != SuperNodeName {
				t.Errorf("Deployment %s/%s, want %s/%s", d.Namespace, d.Name, SuperNodeNamespace, SuperNodeName)
			}
			c := d.Spec.Template.Spec.Containers[0]
			if diff := cmp.Diff(tc.wantArgs, c.Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if c.Image != tc.wantImage {
				t.Errorf("image %q, want %q", c.Image, tc.wantImage)
			}
			svc := &corev1.Service{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs["Service"].Object, svc); err != nil {
				t.Fatal(err)
			}
			if svc.Namespace != SuperNodeNamespace || svc.Name != SuperNodeName || svc.Spec.Ports[0].Port != PortClientAppIo {
				t.Errorf("Service %s/%s port %d, want %s/%s port %d", svc.Namespace, svc.Name, svc.Spec.Ports[0].Port, SuperNodeNamespace, SuperNodeName, PortClientAppIo)
			}
			if objs["Namespace"].GetName() != SuperNodeNamespace {
				t.Errorf("Namespace %s, want %s", objs["Namespace"].GetName(), SuperNodeNamespace)
			}
			cm, ok := objs["ConfigMap"]
			if ok != tc.wantConfigMap {
				t.Fatalf("ConfigMap rendered: %t, want %t", ok, tc.wantConfigMap)
			}
			if ok {
				data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
				if diff := cmp.Diff([]string{keyCACert}, keys(data)); diff != "" {
					t.Errorf("ConfigMap keys (-want +got):\n%s", diff)
				}
				if _, err := x509Pool(data[keyCACert]); err != nil {
					t.Errorf("ConfigMap ca.crt: %v", err)
				}
				if d.Spec.Template.Annotations[annotationCA] == "" {
					t.Errorf("the SuperNode's pods carry no CA hash: a new CA would not restart them")
				}
			}
			if strings.Contains(spec, "PRIVATE KEY") {
				t.Errorf("the rendered work holds a private key")
			}
		})
	}
}

func keys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// TestServingCertificate: the SuperLink's certificate names its Service and the external
// address, verifies against the CA, and is issued again when the address changes or a third of
// its life is left.
func TestServingCertificate(t *testing.T) {
	svcNames := []string{"superlink", "superlink.flower-system", "superlink.flower-system.svc", "superlink.flower-system.svc.cluster.local"}
	cases := map[string]struct {
		address string
		wantDNS []string
		wantIPs []string
	}{
		"default":    {wantDNS: svcNames},
		"a DNS name": {address: "flower.example.com:30092", wantDNS: append(svcNames[:4:4], "flower.example.com")},
		"an IP":      {address: "10.0.0.5", wantDNS: svcNames, wantIPs: []string{"10.0.0.5"}},
		"IPv6":       {address: "[2001:db8::1]:9092", wantDNS: svcNames, wantIPs: []string{"2001:db8::1"}},
	}
	ca, err := certs.NewCA(caCommonName, testNow, caLifetime)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := Options{Address: tc.address}.withDefaults()
			s, err := newServingSecret(ca, o, testNow)
			if err != nil {
				t.Fatal(err)
			}
			leaf := parseLeaf(t, s.Data[corev1.TLSCertKey])
			if diff := cmp.Diff(tc.wantDNS, leaf.DNSNames); diff != "" {
				t.Errorf("DNS names (-want +got):\n%s", diff)
			}
			var ips []string
			for _, ip := range leaf.IPAddresses {
				ips = append(ips, ip.String())
			}
			if diff := cmp.Diff(tc.wantIPs, ips); diff != "" {
				t.Errorf("IP addresses (-want +got):\n%s", diff)
			}
			if why, renew := servingProblem(s, ca, o, testNow); why != "" || !renew.After(testNow.Add(200*24*time.Hour)) {
				t.Errorf("fresh certificate: problem %q, renew at %s; want none, in about 8 months", why, renew)
			}
			if why, _ := servingProblem(s, ca, Options{Address: "elsewhere.example.com"}.withDefaults(), testNow); !strings.Contains(why, "names") {
				t.Errorf("another address: problem %q, want the names", why)
			}
			if why, _ := servingProblem(s, ca, o, testNow.Add(250*24*time.Hour)); !strings.Contains(why, "expires") {
				t.Errorf("two thirds through its life: problem %q, want renewal", why)
			}
			if string(s.Data[keyCACert]) != string(ca.CertPEM()) {
				t.Errorf("the serving Secret's ca.crt is not the CA's certificate")
			}
		})
	}
	other, err := certs.NewCA("other", testNow, caLifetime)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newServingSecret(other, Options{}.withDefaults(), testNow)
	if err != nil {
		t.Fatal(err)
	}
	if why, _ := servingProblem(s, ca, Options{}.withDefaults(), testNow); why == "" {
		t.Errorf("a certificate of another CA passes")
	}
}

func TestSuperLinkDeployment(t *testing.T) {
	cases := map[string]struct {
		opts        Options
		wantArgs    []string
		wantVolumes int
	}{
		"TLS":      {wantArgs: SuperLinkArgs(true), wantVolumes: 1},
		"insecure": {opts: Options{Insecure: true, SuperLinkImage: "mirror/superlink:1.42.0"}, wantArgs: SuperLinkArgs(false)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := superLinkDeployment(tc.opts, "abc")
			c := d.Spec.Template.Spec.Containers[0]
			if diff := cmp.Diff(tc.wantArgs, c.Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if want := tc.opts.withDefaults().SuperLinkImage; c.Image != want {
				t.Errorf("image %q, want %q", c.Image, want)
			}
			if got := len(d.Spec.Template.Spec.Volumes); got != tc.wantVolumes {
				t.Errorf("%d volumes, want %d", got, tc.wantVolumes)
			}
			var ports []int32
			for _, p := range superLinkService().Spec.Ports {
				ports = append(ports, p.Port)
			}
			if diff := cmp.Diff([]int32{9091, 9092, 9093}, ports); diff != "" {
				t.Errorf("Service ports (-want +got):\n%s", diff)
			}
		})
	}
}
