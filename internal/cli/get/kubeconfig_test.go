package get

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
)

// TestGetFindsTheHubAsKubectl runs `flotilla get` without --kubeconfig: the real kubeconfig
// loading picks the hub from $KUBECONFIG or ~/.kube/config, and a fake client serves the fleet.
func TestGetFindsTheHubAsKubectl(t *testing.T) {
	const hubKubeconfig = "apiVersion: v1\nkind: Config\ncurrent-context: hub\n" +
		"clusters:\n- name: hub\n  cluster:\n    server: https://127.0.0.1:1\n" +
		"users:\n- name: admin\n  user:\n    token: t\n" +
		"contexts:\n" +
		"- name: hub\n  context:\n    cluster: hub\n    user: admin\n    namespace: " + contextNamespace + "\n" +
		"- name: ml\n  context:\n    cluster: hub\n    user: admin\n    namespace: ml\n"
	cases := map[string]struct {
		args        []string
		env         bool // $KUBECONFIG names the hub's kubeconfig
		home        bool // ~/.kube/config is the hub's kubeconfig
		wantSource  string
		wantOut     string
		wantErrOut  string
		wantErrText string
	}{
		"$KUBECONFIG": {
			args: []string{"bindings"}, env: true, wantSource: "DIR/hub.kubeconfig (from $KUBECONFIG)",
			wantOut: lines(
				"NAME     CLUSTERSET   BOUND   AGE",
				"a100     a100         True    2d",
				"global   global       True    60m",
			),
		},
		"~/.kube/config": {
			args: []string{"bindings"}, home: true, wantSource: "DIR/home/.kube/config",
			wantOut: lines(
				"NAME     CLUSTERSET   BOUND   AGE",
				"a100     a100         True    2d",
				"global   global       True    60m",
			),
		},
		"--context picks the namespace of another context": {
			args: []string{"bindings", "--context", "ml"}, env: true, wantSource: "DIR/hub.kubeconfig (from $KUBECONFIG)",
			wantErrOut: "No resources found in ml namespace.\n",
		},
		"no kubeconfig anywhere": {
			args:        []string{"clusters"},
			wantErrText: "no kubeconfig: set --kubeconfig, $KUBECONFIG or ~/.kube/config (tried DIR/home/.kube/config (no such file), $KUBECONFIG is not set",
		},
		"a context the kubeconfig lacks": {
			args: []string{"clusters", "--context", "prod"}, env: true,
			wantErrText: `the kubeconfig DIR/hub.kubeconfig (from $KUBECONFIG) has no context "prod": pass one of its contexts (hub, ml) with --context`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			home := filepath.Join(dir, "home")
			t.Setenv("HOME", home)
			t.Setenv("KUBERNETES_SERVICE_HOST", "")
			t.Setenv(kubeflags.EnvVar, "")
			if err := os.Unsetenv(kubeflags.EnvVar); err != nil {
				t.Fatal(err)
			}
			write := func(path string) {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(hubKubeconfig), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tc.env {
				write(filepath.Join(dir, "hub.kubeconfig"))
				t.Setenv(kubeflags.EnvVar, filepath.Join(dir, "hub.kubeconfig"))
			}
			if tc.home {
				write(filepath.Join(home, ".kube", "config"))
			}
			var source string
			newClient := func(kube kubeflags.Flags) (client.Reader, *kubeflags.Loaded, error) {
				hub, err := kube.Load()
				if err != nil {
					return nil, nil, err
				}
				source = hub.Source
				return fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(fleet()...).Build(), hub, nil
			}
			out, errOut, err := runGet(newClient, tc.args...)
			if tc.wantErrText != "" {
				if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), dir, "DIR"), tc.wantErrText) {
					t.Fatalf("get %v: err = %v, want one saying %q", tc.args, err, tc.wantErrText)
				}
				return
			}
			if err != nil {
				t.Fatalf("get %v: %v", tc.args, err)
			}
			if diff := cmp.Diff(tc.wantSource, strings.ReplaceAll(source, dir, "DIR")); diff != "" {
				t.Errorf("kubeconfig (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantOut, out); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantErrOut, errOut); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}
