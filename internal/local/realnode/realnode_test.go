package realnode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func TestNetworkNames(t *testing.T) {
	for _, tc := range []struct {
		n    Network
		want []string
	}{
		{Network{Index: 1}, []string{"flotilla-rn1", "/run/netns/flotilla-rn1", "flrn1", "10.250.1.1", "10.250.1.2", "10.251.1.0/24", "flotilla-rn1", "/run/flotilla-rn1"}},
		{Network{Index: maxIndex}, []string{"flotilla-rn250", "/run/netns/flotilla-rn250", "flrn250", "10.250.250.1", "10.250.250.2", "10.251.250.0/24", "flotilla-rn250", "/run/flotilla-rn250"}},
	} {
		got := []string{tc.n.Namespace(), tc.n.NamespacePath(), tc.n.HostLink(), tc.n.HostIP(), tc.n.NodeIP(), tc.n.PodCIDR(), tc.n.CgroupName(), tc.n.RunDir()}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("index %d (-want +got):\n%s", tc.n.Index, diff)
		}
		// Linux refuses interface names over 15 bytes; the peer's temporary name adds a "p".
		if l := len(tc.n.HostLink() + "p"); l > 15 {
			t.Errorf("index %d: link name %q is %d bytes, over Linux's 15", tc.n.Index, tc.n.HostLink()+"p", l)
		}
	}
}

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		"/var/lib/kubelet":             "/var/lib/kubelet",
		`/tmp/a\040b`:                  "/tmp/a b",
		`/tmp/tab\011and\134backslash`: "/tmp/tab\tand\\backslash",
		`/tmp/trailing\04`:             `/tmp/trailing\04`,
	} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestJoinLabels(t *testing.T) {
	got := joinLabels(map[string]string{"b": "2", "a": "1", "flotilla.io/real-node": "true"})
	if want := "a=1,b=2,flotilla.io/real-node=true"; got != want {
		t.Errorf("joinLabels = %q, want %q", got, want)
	}
}

// The node's configuration files parse, and say what the kubelet and containerd need on these
// machines.
func TestConfigs(t *testing.T) {
	n := &Node{Name: "n", Dir: t.TempDir(), Network: Network{Index: 7}}
	if err := n.writeContainerdConfig(); err != nil {
		t.Fatal(err)
	}
	var containerd struct {
		Version int
		Root    string
		State   string
		GRPC    struct{ Address string }
		Plugins map[string]map[string]any
	}
	if _, err := toml.DecodeFile(n.containerdConfigPath(), &containerd); err != nil {
		t.Fatal(err)
	}
	cri := containerd.Plugins["io.containerd.grpc.v1.cri"]
	got := map[string]any{
		"version": containerd.Version, "socket": containerd.GRPC.Address, "state": containerd.State,
		"sandbox_image": cri["sandbox_image"], "restrict_oom_score_adj": cri["restrict_oom_score_adj"],
		"netns_mounts_under_state_dir": cri["netns_mounts_under_state_dir"],
	}
	want := map[string]any{
		"version": int(2), "socket": "/run/flotilla-rn7/containerd.sock", "state": "/run/flotilla-rn7/state",
		"sandbox_image": PauseImage, "restrict_oom_score_adj": true, "netns_mounts_under_state_dir": true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("containerd config (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(containerd.Root, n.Dir) {
		t.Errorf("containerd root %s is not in the node's folder %s", containerd.Root, n.Dir)
	}
	cni, err := os.ReadFile(filepath.Join(n.Dir, "cni", "net.d", "10-flotilla.conflist"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cni), `"subnet": "10.251.7.0/24"`) || !strings.Contains(string(cni), `"ipMasq": false`) {
		t.Errorf("CNI config lacks the node's pod range or sets masquerading:\n%s", cni)
	}

	var kubelet map[string]any
	if err := yaml.UnmarshalStrict([]byte(n.kubeletConfig("/ca.crt")), &kubelet); err != nil {
		t.Fatal(err)
	}
	gotK := map[string]any{
		"failCgroupV1": kubelet["failCgroupV1"], "cgroupRoot": kubelet["cgroupRoot"],
		"containerRuntimeEndpoint": kubelet["containerRuntimeEndpoint"], "address": kubelet["address"],
		"anonymous":     kubelet["authentication"].(map[string]any)["anonymous"],
		"authorization": kubelet["authorization"],
	}
	wantK := map[string]any{
		"failCgroupV1": false, "cgroupRoot": "/flotilla-rn7",
		"containerRuntimeEndpoint": "unix:///run/flotilla-rn7/containerd.sock", "address": "10.250.7.2",
		"anonymous":     map[string]any{"enabled": false},
		"authorization": map[string]any{"mode": "Webhook"},
	}
	if diff := cmp.Diff(wantK, gotK); diff != "" {
		t.Errorf("kubelet config (-want +got):\n%s", diff)
	}
}
