package realnode

import (
	"fmt"
	"os"
	"path/filepath"
)

// cniBinDir is where Debian's containernetworking-plugins installs the plugins.
const cniBinDir = "/usr/lib/cni"

func (n *Node) containerdConfigPath() string { return filepath.Join(n.Dir, "containerd.toml") }

// writeContainerdConfig writes containerd's configuration and the node's CNI network.
//
// Two settings this machine kind needs (docs/local-fleets.md, --real-nodes): restrict_oom_score_adj,
// as sandboxes here lack CAP_SYS_RESOURCE and runc fails when the kubelet asks -998 for a pod
// sandbox; and the pause image built here, as registry.k8s.io/pause cannot be pulled.
func (n *Node) writeContainerdConfig() error {
	cniConfDir := filepath.Join(n.Dir, "cni", "net.d")
	if err := os.MkdirAll(cniConfDir, 0o755); err != nil {
		return err
	}
	config := fmt.Sprintf(`version = 2
root = %q
state = %q

[grpc]
  address = %q

[ttrpc]
  address = %q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false

[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = %q
  conf_dir = %q

[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
  SystemdCgroup = false

[plugins."io.containerd.internal.v1.opt"]
  path = %q
`, filepath.Join(n.Dir, "containerd", "root"), filepath.Join(n.Network.RunDir(), "state"),
		n.socket(), filepath.Join(n.Network.RunDir(), "containerd.sock.ttrpc"),
		PauseImage, cniBinDir, cniConfDir, filepath.Join(n.Dir, "containerd", "opt"))
	if err := os.WriteFile(n.containerdConfigPath(), []byte(config), 0o644); err != nil {
		return err
	}
	// One bridge in the node's namespace, addresses from the node's pod range; no masquerading:
	// nothing leaves the machine.
	cni := fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "flotilla",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": %q}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": %q
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, n.Network.PodCIDR(), filepath.Join(n.Dir, "cni", "ipam"))
	return os.WriteFile(filepath.Join(cniConfDir, "10-flotilla.conflist"), []byte(cni), 0o644)
}

// kubeletConfig is the kubelet's KubeletConfiguration.
//
// failCgroupV1: false, as these machines run cgroups v1; cgroupRoot keeps the node's pods in its
// own cgroup tree (two nodes on one machine would share kubepods otherwise); authentication by
// the cluster's CA and authorization by the API server, as on any cluster; image garbage
// collection off, as the node's images come from files and cannot be pulled again; eviction
// thresholds low, as the machine's disk and memory are shared with the rest of the fleet; the
// node's CoreDNS, at the node's address, as the cluster DNS its pods with dnsPolicy ClusterFirst
// get in their resolv.conf, with the search path <namespace>.svc.cluster.local svc.cluster.local
// cluster.local.
func (n *Node) kubeletConfig(caFile string) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
failSwapOn: false
cgroupDriver: cgroupfs
cgroupRoot: /%s
containerRuntimeEndpoint: unix://%s
address: %s
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %s
authorization:
  mode: Webhook
clusterDomain: %s
clusterDNS: [%s]
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 50Mi
  nodefs.available: 1%%
  imagefs.available: 1%%
  nodefs.inodesFree: 1%%
enforceNodeAllocatable: ["pods"]
serializeImagePulls: false
`, n.Network.CgroupName(), n.socket(), n.Network.NodeIP(), caFile, ClusterDomain, n.Network.NodeIP())
}

// kubeProxyConfig is kube-proxy's KubeProxyConfiguration: iptables mode, the node's pod range as
// the cluster's (traffic from elsewhere is not masqueraded), its ports on the namespace's
// loopback, and no conntrack sysctls, which a network namespace other than the machine's may not
// set (maxPerCore 0 and zero timeouts leave the kernel's values).
func (n *Node) kubeProxyConfig(kubeconfig string) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %s
mode: iptables
hostnameOverride: %s
clusterCIDR: %s
bindAddress: 0.0.0.0
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`, kubeconfig, n.Name, n.Network.PodCIDR())
}
