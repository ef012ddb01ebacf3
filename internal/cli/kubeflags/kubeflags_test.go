package kubeflags

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// kubeContext is one context of a test kubeconfig, with a cluster and user of its own name.
type kubeContext struct {
	name, server, namespace string
}

// writeKubeconfig writes a kubeconfig with contexts and current-context current to path.
func writeKubeconfig(t *testing.T, path, current string, contexts ...kubeContext) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\n")
	if current != "" {
		b.WriteString("current-context: " + current + "\n")
	}
	b.WriteString("clusters:\n")
	for _, c := range contexts {
		b.WriteString("- name: " + c.name + "\n  cluster:\n    server: " + c.server + "\n")
	}
	b.WriteString("users:\n")
	for _, c := range contexts {
		b.WriteString("- name: " + c.name + "\n  user:\n    token: t-" + c.name + "\n")
	}
	b.WriteString("contexts:\n")
	for _, c := range contexts {
		b.WriteString("- name: " + c.name + "\n  context:\n    cluster: " + c.name + "\n    user: " + c.name + "\n")
		if c.namespace != "" {
			b.WriteString("    namespace: " + c.namespace + "\n")
		}
	}
	writeFile(t, path, b.String())
	return path
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// result is what a test compares of a Loaded.
type result struct {
	Host, Namespace, Context, Source string
}

func TestLoad(t *testing.T) {
	const (
		flagServer = "https://127.0.0.1:6001"
		envServer  = "https://127.0.0.1:6002"
		env2Server = "https://127.0.0.1:6003"
		homeServer = "https://127.0.0.1:6004"
	)
	cases := map[string]struct {
		// setup writes files under dir and returns the flags, $KUBECONFIG (unset when empty) and
		// whether ~/.kube/config exists.
		setup    func(t *testing.T, dir string) (flags Flags, env string)
		noHome   bool
		want     result
		wantErrs []string
	}{
		"--kubeconfig before $KUBECONFIG and ~/.kube/config": {
			setup: func(t *testing.T, dir string) (Flags, string) {
				flag := writeKubeconfig(t, filepath.Join(dir, "flag.kubeconfig"), "flag", kubeContext{"flag", flagServer, "team"})
				env := writeKubeconfig(t, filepath.Join(dir, "env.kubeconfig"), "env", kubeContext{"env", envServer, ""})
				return Flags{Kubeconfig: flag}, env
			},
			want: result{Host: flagServer, Namespace: "team", Context: "flag", Source: "DIR/flag.kubeconfig"},
		},
		"$KUBECONFIG before ~/.kube/config": {
			setup: func(t *testing.T, dir string) (Flags, string) {
				return Flags{}, writeKubeconfig(t, filepath.Join(dir, "env.kubeconfig"), "env", kubeContext{"env", envServer, ""})
			},
			want: result{Host: envServer, Namespace: "default", Context: "env", Source: "DIR/env.kubeconfig (from $KUBECONFIG)"},
		},
		"~/.kube/config when neither is set": {
			setup: func(*testing.T, string) (Flags, string) { return Flags{}, "" },
			want:  result{Host: homeServer, Namespace: "default", Context: "home", Source: "DIR/home/.kube/config"},
		},
		"$KUBECONFIG files merged: the first file's current context": {
			setup: func(t *testing.T, dir string) (Flags, string) {
				a := writeKubeconfig(t, filepath.Join(dir, "a.kubeconfig"), "a", kubeContext{"a", envServer, ""})
				b := writeKubeconfig(t, filepath.Join(dir, "b.kubeconfig"), "b", kubeContext{"b", env2Server, "research"})
				return Flags{}, a + string(filepath.ListSeparator) + b
			},
			want: result{Host: envServer, Namespace: "default", Context: "a", Source: "$KUBECONFIG (DIR/a.kubeconfig, DIR/b.kubeconfig)"},
		},
		"$KUBECONFIG files merged: --context picks one of the second file": {
			setup: func(t *testing.T, dir string) (Flags, string) {
				a := writeKubeconfig(t, filepath.Join(dir, "a.kubeconfig"), "a", kubeContext{"a", envServer, ""})
				b := writeKubeconfig(t, filepath.Join(dir, "b.kubeconfig"), "b", kubeContext{"b", env2Server, "research"})
				return Flags{Context: "b"}, a + string(filepath.ListSeparator) + b
			},
			want: result{Host: env2Server, Namespace: "research", Context: "b", Source: "$KUBECONFIG (DIR/a.kubeconfig, DIR/b.kubeconfig)"},
		},
		"$KUBECONFIG skips a missing file": {
			setup: func(t *testing.T, dir string) (Flags, string) {
				b := writeKubeconfig(t, filepath.Join(dir, "b.kubeconfig"), "b", kubeContext{"b", env2Server, ""})
				return Flags{}, filepath.Join(dir, "missing") + string(filepath.ListSeparator) + b
			},
			want: result{Host: env2Server, Namespace: "default", Context: "b", Source: "$KUBECONFIG (DIR/missing, DIR/b.kubeconfig)"},
		},
		"--context picks a context of --kubeconfig": {
			setup: func(t *testing.T, dir string) (Flags, string) {
				flag := writeKubeconfig(t, filepath.Join(dir, "flag.kubeconfig"), "one",
					kubeContext{"one", flagServer, ""}, kubeContext{"two", env2Server, "ml"})
				return Flags{Kubeconfig: flag, Context: "two"}, ""
			},
			want: result{Host: env2Server, Namespace: "ml", Context: "two", Source: "DIR/flag.kubeconfig"},
		},
		"--context picks a context of ~/.kube/config": {
			setup: func(*testing.T, string) (Flags, string) { return Flags{Context: "other"}, "" },
			want:  result{Host: env2Server, Namespace: "default", Context: "other", Source: "DIR/home/.kube/config"},
		},
		"a missing context is named with the ones there are": {
			setup:    func(*testing.T, string) (Flags, string) { return Flags{Context: "staging"}, "" },
			wantErrs: []string{`the kubeconfig DIR/home/.kube/config has no context "staging"`, "(home, other)", "--context"},
		},
		"no current context": {
			setup: func(t *testing.T, dir string) (Flags, string) {
				return Flags{}, writeKubeconfig(t, filepath.Join(dir, "env.kubeconfig"), "", kubeContext{"env", envServer, ""})
			},
			wantErrs: []string{"DIR/env.kubeconfig (from $KUBECONFIG) names no current context", "(env)", "--context"},
		},
		"a current context it does not define": {
			setup: func(t *testing.T, dir string) (Flags, string) {
				return Flags{}, writeKubeconfig(t, filepath.Join(dir, "env.kubeconfig"), "gone", kubeContext{"env", envServer, ""})
			},
			wantErrs: []string{`names current context "gone", which it does not define`, "(env)"},
		},
		"unparsable $KUBECONFIG file": {
			setup: func(t *testing.T, dir string) (Flags, string) {
				bad := filepath.Join(dir, "bad.kubeconfig")
				writeFile(t, bad, "clusters: [this is: not a kubeconfig\n")
				return Flags{}, bad
			},
			wantErrs: []string{"loading the kubeconfig DIR/bad.kubeconfig (from $KUBECONFIG)", `error loading config file "DIR/bad.kubeconfig"`, "fix the file or pass another with --kubeconfig"},
		},
		"unparsable --kubeconfig file": {
			setup: func(t *testing.T, dir string) (Flags, string) {
				bad := filepath.Join(dir, "bad.kubeconfig")
				writeFile(t, bad, "\x00\x01 not yaml")
				return Flags{Kubeconfig: bad}, ""
			},
			wantErrs: []string{"loading the kubeconfig DIR/bad.kubeconfig:", "fix the file"},
		},
		"--kubeconfig names no file": {
			setup: func(t *testing.T, dir string) (Flags, string) {
				return Flags{Kubeconfig: filepath.Join(dir, "nope.kubeconfig")}, ""
			},
			wantErrs: []string{"--kubeconfig DIR/nope.kubeconfig: no such file"},
		},
		"nothing anywhere": {
			setup:    func(*testing.T, string) (Flags, string) { return Flags{}, "" },
			noHome:   true,
			wantErrs: []string{"no kubeconfig: set --kubeconfig, $KUBECONFIG or ~/.kube/config", "DIR/home/.kube/config (no such file)", "$KUBECONFIG is not set"},
		},
		"$KUBECONFIG names only missing files: ~/.kube/config is not used": {
			setup: func(_ *testing.T, dir string) (Flags, string) {
				return Flags{}, filepath.Join(dir, "a") + string(filepath.ListSeparator) + filepath.Join(dir, "b")
			},
			wantErrs: []string{"no kubeconfig: set --kubeconfig, $KUBECONFIG or ~/.kube/config", "$KUBECONFIG: DIR/a (no such file), DIR/b (no such file)"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			home := filepath.Join(dir, "home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("HOME", home)
			t.Setenv("KUBERNETES_SERVICE_HOST", "") // never the in-cluster configuration of a CI pod
			if !tc.noHome {
				writeKubeconfig(t, filepath.Join(home, ".kube", "config"), "home",
					kubeContext{"home", homeServer, ""}, kubeContext{"other", env2Server, ""})
			}
			flags, env := tc.setup(t, dir)
			t.Setenv(EnvVar, env)
			if env == "" {
				if err := os.Unsetenv(EnvVar); err != nil { // t.Setenv restores it afterwards
					t.Fatal(err)
				}
			}
			loaded, err := flags.Load()
			if len(tc.wantErrs) > 0 {
				if err == nil {
					t.Fatalf("Load() = %+v, want an error", loaded)
				}
				msg := strings.ReplaceAll(err.Error(), dir, "DIR")
				for _, want := range tc.wantErrs {
					if !strings.Contains(msg, want) {
						t.Errorf("error %q does not say %q", msg, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := result{Host: loaded.Config.Host, Namespace: loaded.Namespace, Context: loaded.Context,
				Source: strings.ReplaceAll(loaded.Source, dir, "DIR")}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Load() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestArgs(t *testing.T) {
	cases := map[string]struct {
		flags Flags
		want  string
	}{
		"defaults":           {want: ""},
		"kubeconfig":         {flags: Flags{Kubeconfig: "/tmp/hub.kubeconfig"}, want: "--kubeconfig /tmp/hub.kubeconfig"},
		"context":            {flags: Flags{Context: "kind-hub"}, want: "--context kind-hub"},
		"both, with a space": {flags: Flags{Kubeconfig: "my hub.kubeconfig", Context: "hub"}, want: "--kubeconfig 'my hub.kubeconfig' --context hub"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.flags.Args()); diff != "" {
				t.Errorf("Args() (-want +got):\n%s", diff)
			}
		})
	}
}
