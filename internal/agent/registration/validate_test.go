package registration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidateClusterName(t *testing.T) {
	const rule = "; a cluster name is a DNS-1123 label: 1 to 63 characters, lowercase letters, digits and '-', " +
		"starting and ending with a letter or digit (such as gpu-east)"
	tests := map[string]struct {
		name    string
		wantErr string
	}{
		"a label":               {name: "gpu-east"},
		"digits first":          {name: "1st-cluster"},
		"63 characters":         {name: strings.Repeat("a", 63)},
		"empty":                 {name: "", wantErr: "--cluster-name is required: a cluster name is a DNS-1123 label: 1 to 63 characters, lowercase letters, digits and '-', starting and ending with a letter or digit (such as gpu-east)"},
		"64 characters":         {name: strings.Repeat("a", 64), wantErr: `--cluster-name "` + strings.Repeat("a", 64) + `" is not a valid cluster name: it is 64 characters long` + rule},
		"uppercase":             {name: "Gpu-east", wantErr: `--cluster-name "Gpu-east" is not a valid cluster name: it has 'G' at position 1` + rule},
		"underscore":            {name: "gpu_east", wantErr: `--cluster-name "gpu_east" is not a valid cluster name: it has '_' at position 4` + rule},
		"a dot (DNS subdomain)": {name: "gpu.east", wantErr: `--cluster-name "gpu.east" is not a valid cluster name: it has '.' at position 4` + rule},
		"leading dash":          {name: "-gpu", wantErr: `--cluster-name "-gpu" is not a valid cluster name: it starts with '-'` + rule},
		"trailing dash":         {name: "gpu-", wantErr: `--cluster-name "gpu-" is not a valid cluster name: it ends with '-'` + rule},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := ValidateClusterName("--cluster-name", tc.name)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, got); diff != "" {
				t.Errorf("ValidateClusterName(%q) error (-want +got):\n%s", tc.name, diff)
			}
		})
	}
}

func TestLoadKubeconfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const what = "the bootstrap kubeconfig that `flotilla init` printed on the hub"
	kubeconfig := func(user string) string {
		return `apiVersion: v1
kind: Config
clusters:
- name: hub
  cluster:
    server: https://127.0.0.1:6443
contexts:
- name: bootstrap
  context: {cluster: hub, user: bootstrap}
current-context: bootstrap
users:
- name: bootstrap
  user: ` + user + "\n"
	}
	tests := map[string]struct {
		path         string
		wantErr      string // the whole message, or a prefix when wantErrParts is set
		wantErrParts []string
		wantHost     string
	}{
		"a bootstrap kubeconfig": {
			path: write("good", kubeconfig("{token: abcdef.0123456789abcdef}")), wantHost: "https://127.0.0.1:6443",
		},
		"no flag": {
			path: "", wantErr: "--bootstrap-kubeconfig is required: " + what,
		},
		"missing file": {
			path: filepath.Join(dir, "nope"), wantErr: "--bootstrap-kubeconfig " + filepath.Join(dir, "nope") + ": no such file; pass " + what,
		},
		"a directory": {
			path: dir, wantErr: "--bootstrap-kubeconfig " + dir + " is a directory; pass " + what,
		},
		"not YAML": {
			path:         write("garbage", "{{{ not yaml"),
			wantErrParts: []string{"--bootstrap-kubeconfig " + filepath.Join(dir, "garbage") + " does not parse as a kubeconfig (", "); pass " + what},
		},
		"empty": {
			path:         write("empty", ""),
			wantErrParts: []string{"--bootstrap-kubeconfig " + filepath.Join(dir, "empty") + " is not a usable kubeconfig (", "no configuration has been provided", "); pass " + what},
		},
		"no credentials": {
			path: write("anonymous", kubeconfig("{}")),
			wantErr: "--bootstrap-kubeconfig " + filepath.Join(dir, "anonymous") +
				" has no credentials (a token or a client certificate) for its server https://127.0.0.1:6443; pass " + what,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := LoadKubeconfig("--bootstrap-kubeconfig", tc.path, what)
			got := ""
			if err != nil {
				got = err.Error()
			}
			switch {
			case tc.wantErrParts != nil:
				for _, part := range tc.wantErrParts {
					if !strings.Contains(got, part) {
						t.Errorf("error %q does not contain %q", got, part)
					}
				}
			default:
				if diff := cmp.Diff(tc.wantErr, got); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
			}
			if tc.wantHost != "" && (cfg == nil || cfg.Host != tc.wantHost) {
				t.Errorf("config = %+v, want host %s", cfg, tc.wantHost)
			}
		})
	}
}

func TestValidateExternalServerURLs(t *testing.T) {
	many := make([]string, 33)
	for i := range many {
		many[i] = "https://api.example.com"
	}
	cases := map[string]struct {
		urls    []string
		wantErr string
	}{
		"none":                 {},
		"https with a port":    {urls: []string{"https://api.gpu-east-1.example.com:6443", "https://10.0.0.1"}},
		"http":                 {urls: []string{"http://api.example.com"}, wantErr: `--spoke-external-server-urls[0] "http://api.example.com" is not an absolute https URL: give the address at which the hub reaches this cluster's API server, such as https://api.gpu-east-1.example.com:6443`},
		"no host":              {urls: []string{"https://api.example.com", "https://"}, wantErr: `--spoke-external-server-urls[1] "https://" is not an absolute https URL`},
		"a host without https": {urls: []string{"api.example.com:6443"}, wantErr: `--spoke-external-server-urls[0] "api.example.com:6443" is not an absolute https URL`},
		"too many":             {urls: many, wantErr: "--spoke-external-server-urls names 33 addresses: a ManagedCluster holds at most 32 in spec.managedClusterClientConfigs"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := ValidateExternalServerURLs("--spoke-external-server-urls", tc.urls)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("ValidateExternalServerURLs() = %v, want nil", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Errorf("ValidateExternalServerURLs() = %v, want an error starting %q", err, tc.wantErr)
			}
		})
	}
}
