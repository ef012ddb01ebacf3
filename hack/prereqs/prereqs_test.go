package prereqs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// machine is a set of stand-in commands: name -> shell body. A command absent from it is absent
// from the machine.
type machine map[string]string

// full is a machine with everything make test needs, as root.
func full() machine {
	return machine{
		"go":         `[ "$1 $2" = "env GOVERSION" ] && echo go1.26.8`,
		"gcc":        "true",
		"git":        "true",
		"make":       "true",
		"sha256sum":  "true",
		"node":       "echo v20.20.2",
		"npm":        "true",
		"prometheus": "true",
		"chromium":   "true",
		"iptables":   "true",
		"containerd": "true",
		"runc":       "true",
		"bridge":     "true", // a CNI plugin: FLOTILLA_CNI_DIR is the machine's folder
		"ip":         "true",
		"nsenter":    "true",
		"id":         `[ "$1" = -u ] && echo 0 || echo root`,
		"python":     "exit 0",
	}
}

func (m machine) without(names ...string) machine {
	out := machine{}
	for k, v := range m {
		out[k] = v
	}
	for _, n := range names {
		delete(out, n)
	}
	return out
}

func (m machine) with(name, body string) machine {
	out := m.without()
	out[name] = body
	return out
}

// run runs prereqs.sh with args on m and returns its exit code, stdout and stderr.
func run(t *testing.T, m machine, args ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	// The script's own tools come from the real machine.
	for _, tool := range []string{"bash", "sort", "head", "tr"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range m {
		if name == "python" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	python := filepath.Join(dir, "no-python")
	if body, ok := m["python"]; ok {
		python = filepath.Join(dir, "python3.11")
		if err := os.WriteFile(python, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Read the script here (not only from bash) so that go test's cache knows the test depends on it.
	script, err := os.ReadFile("prereqs.sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prereqs.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(dir, "bash"), append([]string{filepath.Join(dir, "prereqs.sh")}, args...)...)
	cmd.Env = []string{"PATH=" + dir, "FLOTILLA_PYTHON=" + python, "HOME=" + dir, "FLOTILLA_CNI_DIR=" + dir}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

func TestPrereqs(t *testing.T) {
	for name, tc := range map[string]struct {
		machine  machine
		target   string
		wantCode int
		// wantLines must each appear in stderr; wantPackages is what --packages prints.
		wantLines    []string
		wantPackages []string
	}{
		"everything there":        {machine: full(), target: "test"},
		"build needs no Chromium": {machine: full().without("chromium", "prometheus", "iptables"), target: "build"},
		"test without Prometheus, Chromium and iptables": {
			machine: full().without("chromium", "prometheus", "iptables"), target: "test", wantCode: 1,
			wantLines: []string{
				"lacks what make test needs",
				"Prometheus server binary",
				"Chromium (the dashboard's browser tests",
				"iptables (the chaos tests",
				"apt-get update && apt-get install -y chromium iptables prometheus",
			},
			wantPackages: []string{"chromium", "iptables", "prometheus"},
		},
		"Node.js too old": {
			machine: full().with("node", "echo v18.19.0"), target: "build", wantCode: 1,
			wantLines: []string{"Node.js 20.19 or newer (found v18.19.0", "https://nodejs.org/"},
		},
		"no npm": {
			machine: full().without("npm"), target: "demo", wantCode: 1,
			wantLines: []string{"Node.js 20.19 or newer with npm"},
		},
		"Go too old": {
			machine: full().with("go", `echo go1.22.1`), target: "build", wantCode: 1,
			wantLines: []string{"Go 1.26 or newer (found go1.22.1)"},
		},
		"Python without venv": {
			machine: full().with("python", `case "$*" in *ensurepip*) exit 1;; esac; exit 0`), target: "demo-fl", wantCode: 1,
			wantLines:    []string{"Python's venv module", "apt-get install -y python3-pip python3-venv"},
			wantPackages: []string{"python3-pip", "python3-venv"},
		},
		"no Python": {
			machine: full().without("python"), target: "test", wantCode: 1,
			wantLines:    []string{"Python 3.10 or newer"},
			wantPackages: []string{"python3"},
		},
		"no container runtime": {
			machine: full().without("containerd", "runc", "bridge"), target: "test", wantCode: 1,
			wantLines: []string{
				"containerd (real nodes",
				"runc (containerd's runtime",
				"the CNI plugins in /usr/lib/cni",
				"apt-get install -y containerd containernetworking-plugins runc",
			},
			wantPackages: []string{"containerd", "containernetworking-plugins", "runc"},
		},
		"demo-real needs root and a runtime, not Chromium": {
			machine: full().without("chromium", "prometheus", "runc").with("id", `[ "$1" = -u ] && echo 1000 || echo dev`), target: "demo-real", wantCode: 1,
			wantLines:    []string{"runc (containerd's runtime", "root (real nodes make network namespaces"},
			wantPackages: []string{"runc"},
		},
		"not root and no sudo": {
			machine: full().with("id", `[ "$1" = -u ] && echo 1000 || echo dev`).with("sudo", "exit 1"), target: "test", wantCode: 1,
			wantLines: []string{"root, or passwordless sudo", "give dev passwordless sudo"},
		},
		"not root with passwordless sudo": {
			machine: full().with("id", `[ "$1" = -u ] && echo 1000 || echo dev`).with("sudo", "exit 0"), target: "test",
		},
	} {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := run(t, tc.machine, tc.target)
			if code != tc.wantCode {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", code, tc.wantCode, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing (messages go to stderr)", stdout)
			}
			if tc.wantCode == 0 && stderr != "" {
				t.Errorf("stderr %q, want nothing", stderr)
			}
			for _, l := range tc.wantLines {
				if !strings.Contains(stderr, l) {
					t.Errorf("stderr lacks %q:\n%s", l, stderr)
				}
			}
			code, stdout, _ = run(t, tc.machine, "--packages", tc.target)
			if code != 0 {
				t.Fatalf("--packages: exit code %d, want 0", code)
			}
			if diff := cmp.Diff(tc.wantPackages, strings.Fields(stdout), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("--packages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnknownTarget(t *testing.T) {
	code, _, stderr := run(t, full(), "deploy")
	if code != 2 || !strings.Contains(stderr, "unknown target deploy") {
		t.Errorf("exit %d, stderr %q: want 2 and the unknown target named", code, stderr)
	}
}
