package realnode

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func TestCoreDNSConfig(t *testing.T) {
	for name, tc := range map[string]struct {
		network    Network
		kubeconfig string
		want       string
	}{
		"first node": {
			network:    Network{Index: 1},
			kubeconfig: "/nodes/a/coredns.kubeconfig",
			want: `.:53 {
    bind 10.250.1.2
    errors
    cache 30
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig /nodes/a/coredns.kubeconfig
        fallthrough in-addr.arpa ip6.arpa
        apiserver_qps 20
    }
}
`,
		},
		"last node": {
			network:    Network{Index: maxIndex},
			kubeconfig: "/b/coredns.kubeconfig",
			want: `.:53 {
    bind 10.250.250.2
    errors
    cache 30
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig /b/coredns.kubeconfig
        fallthrough in-addr.arpa ip6.arpa
        apiserver_qps 20
    }
}
`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, coreDNSConfig(tc.network.NodeIP(), tc.kubeconfig)); diff != "" {
				t.Errorf("Corefile (-want +got):\n%s", diff)
			}
		})
	}
}

// The kubelet gives pods with dnsPolicy ClusterFirst their node's CoreDNS and the cluster's domain.
func TestKubeletDNS(t *testing.T) {
	for name, tc := range map[string]struct {
		network Network
		want    map[string]any
	}{
		"node 1":   {Network{Index: 1}, map[string]any{"clusterDNS": []any{"10.250.1.2"}, "clusterDomain": "cluster.local"}},
		"node 250": {Network{Index: maxIndex}, map[string]any{"clusterDNS": []any{"10.250.250.2"}, "clusterDomain": "cluster.local"}},
	} {
		t.Run(name, func(t *testing.T) {
			n := &Node{Name: "n", Network: tc.network}
			var kubelet map[string]any
			if err := yaml.UnmarshalStrict([]byte(n.kubeletConfig("/ca.crt")), &kubelet); err != nil {
				t.Fatal(err)
			}
			got := map[string]any{"clusterDNS": kubelet["clusterDNS"], "clusterDomain": kubelet["clusterDomain"]}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("kubelet config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFindCoreDNS(t *testing.T) {
	cache := t.TempDir()
	old := filepath.Join(cache, "coredns-"+CoreDNSVersion+"-aaaa", "bin", CoreDNSBin)
	newer := filepath.Join(cache, "coredns-"+CoreDNSVersion+"-bbbb", "bin", CoreDNSBin)
	for i, p := range []string{old, newer} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(time.Duration(i-2) * time.Hour)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	for name, tc := range map[string]struct {
		env, cache string
		want       string
		wantErr    bool
	}{
		"env names the folder":       {env: filepath.Dir(old), cache: cache, want: old},
		"env names a folder without": {env: t.TempDir(), cache: cache, wantErr: true},
		"newest build in the cache":  {cache: cache, want: newer},
		"empty cache":                {cache: t.TempDir(), wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(CoreDNSBinDirEnv, tc.env)
			t.Setenv("FLOTILLA_CACHE_DIR", tc.cache)
			got, err := FindCoreDNS()
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "tools/build-coredns.sh") {
					t.Errorf("FindCoreDNS() = %q, %v; want an error naming tools/build-coredns.sh", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("FindCoreDNS() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestCheckCoreDNS(t *testing.T) {
	bin := filepath.Join(t.TempDir(), CoreDNSBin)
	if err := os.WriteFile(bin, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		path    string
		wantErr bool
	}{
		"a binary": {path: bin},
		"empty":    {path: "", wantErr: true},
		"missing":  {path: bin + ".missing", wantErr: true},
		"a folder": {path: filepath.Dir(bin), wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			err := CheckCoreDNS("Options.CoreDNS", tc.path)
			if tc.wantErr != (err != nil) {
				t.Fatalf("CheckCoreDNS(%q) = %v, want error %v", tc.path, err, tc.wantErr)
			}
			if err != nil && (!strings.Contains(err.Error(), "Options.CoreDNS") || !strings.Contains(err.Error(), "tools/build-coredns.sh")) {
				t.Errorf("error %q names neither the field Options.CoreDNS nor tools/build-coredns.sh", err)
			}
		})
	}
}

// CoreDNSVersion is the release tools/build-coredns.sh builds and tools/coredns pins: FindCoreDNS
// looks for that version's cache folder.
func TestCoreDNSVersionMatchesBuild(t *testing.T) {
	script, err := os.ReadFile("../../../tools/build-coredns.sh")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile("../../../tools/coredns/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{
		"tools/build-coredns.sh VERSION": string(regexp.MustCompile(`(?m)^VERSION=(\S+)$`).FindSubmatch(script)[1]),
		"tools/coredns/go.mod":           string(regexp.MustCompile(`github.com/coredns/coredns (v\S+)`).FindSubmatch(mod)[1]),
	}
	want := map[string]string{"tools/build-coredns.sh VERSION": CoreDNSVersion, "tools/coredns/go.mod": CoreDNSVersion}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CoreDNS versions (-want +got):\n%s", diff)
	}
}

func TestLookupError(t *testing.T) {
	for name, tc := range map[string]struct {
		err  error
		want string
	}{
		"no error, no address": {nil, "no address"},
		"not found":            {&net.DNSError{Err: "no such host", Name: "x.", Server: "10.255.255.53:53", IsNotFound: true}, "NXDOMAIN"},
		"server failure":       {&net.DNSError{Err: "server misbehaving", Name: "x.", Server: "10.255.255.53:53"}, "server misbehaving"},
		"other":                {errors.New("dial udp: refused"), "dial udp: refused"},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, lookupError(tc.err)); diff != "" {
				t.Errorf("lookupError (-want +got):\n%s", diff)
			}
		})
	}
}
