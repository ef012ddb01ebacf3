package flower

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/addontemplate"
)

// TestValidate: the hub's flags, each error naming the flag and what to give.
func TestValidate(t *testing.T) {
	cases := map[string]struct {
		opts    Options
		wantErr []string
	}{
		"defaults":           {},
		"host only":          {opts: Options{Address: "flower.example.com"}},
		"host and port":      {opts: Options{Address: "flower.example.com:30092"}},
		"IPv4":               {opts: Options{Address: "10.0.0.5:30092"}},
		"IPv6 in brackets":   {opts: Options{Address: "[2001:db8::1]:9092"}},
		"IPv6 without port":  {opts: Options{Address: "2001:db8::1"}},
		"scheme":             {opts: Options{Address: "https://flower.example.com"}, wantErr: []string{FlagAddress, "HOST:PORT"}},
		"path":               {opts: Options{Address: "flower.example.com/x"}, wantErr: []string{FlagAddress, "neither an IP address nor a lower-case DNS name"}},
		"port out of range":  {opts: Options{Address: "flower.example.com:70000"}, wantErr: []string{FlagAddress, "from 1 to 65535"}},
		"upper case":         {opts: Options{Address: "Flower.example.com"}, wantErr: []string{FlagAddress, "DNS name"}},
		"image with a space": {opts: Options{SuperLinkImage: "flwr/superlink 1.42"}, wantErr: []string{FlagSuperLinkImage, "image reference"}},
		"image with a quote": {opts: Options{SuperNodeImage: `flwr/supernode"`}, wantErr: []string{FlagSuperNodeImage, "image reference"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := tc.opts.Validate()
			if (err != nil) != (len(tc.wantErr) > 0) {
				t.Fatalf("err = %v, want error %t", err, len(tc.wantErr) > 0)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestCheck: a deployment config's variables for the hub's template; the error names the config,
// the field and the fix. Another add-on's template is not checked.
func TestCheck(t *testing.T) {
	tmpl, err := addOnTemplate(Options{Insecure: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	theirs := tmpl.DeepCopy()
	theirs.Labels = nil
	config := func(vars ...string) *addonv1alpha1.AddOnDeploymentConfig {
		c := &addonv1alpha1.AddOnDeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "fl", Name: "east"}}
		for i := 0; i < len(vars); i += 2 {
			c.Spec.CustomizedVariables = append(c.Spec.CustomizedVariables, addonv1alpha1.CustomizedVariable{Name: vars[i], Value: vars[i+1]})
		}
		return c
	}
	cases := map[string]struct {
		opts    Options
		in      addontemplate.Input
		wantErr string
	}{
		"the hub's default config": {in: addontemplate.Input{Template: tmpl, Config: deploymentConfig(Options{})}},
		"a name the certificate holds": {opts: Options{Address: "flower.example.com:30092"},
			in: addontemplate.Input{Template: tmpl, Config: config(VarAddress, "flower.example.com", VarPort, "30092")}},
		"an IP the certificate holds": {opts: Options{Address: "10.0.0.5"},
			in: addontemplate.Input{Template: tmpl, Config: config(VarAddress, "10.0.0.5")}},
		"insecure: any host": {opts: Options{Insecure: true},
			in: addontemplate.Input{Template: tmpl, Config: config(VarAddress, "10.9.9.9")}},
		"a URL": {in: addontemplate.Input{Template: tmpl, Config: config(VarPort, "9092", VarAddress, "https://superlink")},
			wantErr: `AddOnDeploymentConfig fl/east spec.customizedVariables[1] SUPERLINK_ADDRESS="https://superlink": host "https://superlink" is neither an IP address nor a lower-case DNS name: give the name or address the clusters reach the SuperLink at, without scheme, port or path`},
		"a name the certificate lacks": {in: addontemplate.Input{Template: tmpl, Config: config(VarAddress, "10.0.0.5")},
			wantErr: `AddOnDeploymentConfig fl/east spec.customizedVariables[0] SUPERLINK_ADDRESS="10.0.0.5": the SuperLink's TLS certificate does not name it ` +
				`(it names superlink, superlink.flower-system, superlink.flower-system.svc, superlink.flower-system.svc.cluster.local), ` +
				`so the SuperNode would refuse the connection: use one of those, or start the hub with --flower-superlink-address=10.0.0.5:PORT so that its certificate names it`},
		"IPv6 without brackets": {opts: Options{Insecure: true}, in: addontemplate.Input{Template: tmpl, Config: config(VarAddress, "2001:db8::1")},
			wantErr: `AddOnDeploymentConfig fl/east spec.customizedVariables[0] SUPERLINK_ADDRESS="2001:db8::1": put an IPv6 address in brackets, [2001:db8::1]: the SuperNode is given HOST:PORT`},
		"bad port": {in: addontemplate.Input{Template: tmpl, Config: config(VarPort, "fleet")},
			wantErr: `AddOnDeploymentConfig fl/east spec.customizedVariables[0] SUPERLINK_PORT="fleet": not a port: give the port of the SuperLink's Fleet API as the clusters reach it, from 1 to 65535 (the Service's is 9092)`},
		"bad image": {in: addontemplate.Input{Template: tmpl, Config: config(VarImage, `x" y`)},
			wantErr: `AddOnDeploymentConfig fl/east spec.customizedVariables[0] IMAGE="x\" y": not an image reference: give one such as flwr/supernode:1.42.0`},
		"another install namespace": {in: addontemplate.Input{Template: tmpl, Config: func() *addonv1alpha1.AddOnDeploymentConfig {
			c := config(VarPort, "9092")
			c.Spec.AgentInstallNamespace = "open-cluster-management-agent-addon"
			return c
		}()}, wantErr: `AddOnDeploymentConfig fl/east spec.agentInstallNamespace "open-cluster-management-agent-addon": the SuperNode runs in flower-addon, ` +
			`where FederatedLearning's ClientApps reach it (flower-supernode.flower-addon:9094): set it to flower-addon`},
		"someone else's template": {in: addontemplate.Input{Template: theirs, Config: config(VarPort, "fleet")}},
		"no config":               {in: addontemplate.Input{Template: tmpl}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := Check(tc.opts)(tc.in)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}
