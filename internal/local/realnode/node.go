package realnode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// Options configures Start.
type Options struct {
	// Name is the Node's name.
	Name string
	// Dir holds the node's configuration, logs, containerd's images and the kubelet's pods. It is
	// created if missing.
	Dir string
	// Network is the node's network, from Allocate; the cluster's API server serves at its HostIP.
	Network  Network
	Cluster  *localk8s.Cluster
	Binaries localk8s.Binaries
	// Images are image archives (docker save or OCI layout) imported into the node's containerd
	// before its kubelet starts; the pause image is always imported.
	Images []string
	// Labels are added to the Node by its kubelet (--node-labels).
	Labels map[string]string
	// CoreDNS is the path of the CoreDNS binary (FindCoreDNS; tools/build-coredns.sh builds it)
	// the node runs as its cluster's DNS. Required: Start fails without it rather than run pods
	// without cluster DNS.
	CoreDNS string
	// Detach starts processes that outlive this program (flotilla dev up).
	Detach bool
}

// Node is a running real node.
type Node struct {
	Name    string
	Dir     string
	Network Network

	Containerd *localk8s.Process
	Kubelet    *localk8s.Process
	KubeProxy  *localk8s.Process
	CoreDNS    *localk8s.Process
}

// Check reports, in one error, what this machine lacks to run a real node, and how to get it.
func Check() error {
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root (a node makes network namespaces, cgroups and mounts): run as root")
	}
	for _, c := range []struct{ bin, pkg string }{
		{"containerd", "containerd"}, {"ctr", "containerd"}, {"runc", "runc"}, {"ip", "iproute2"}, {"nsenter", "util-linux"}, {"iptables", "iptables"},
	} {
		if _, err := exec.LookPath(c.bin); err != nil {
			missing = append(missing, fmt.Sprintf("%s (apt-get install %s)", c.bin, c.pkg))
		}
	}
	for _, p := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join(cniBinDir, p)); err != nil {
			missing = append(missing, fmt.Sprintf("the CNI plugin %s in %s (apt-get install containernetworking-plugins)", p, cniBinDir))
		}
	}
	if _, err := hierarchies(); err != nil {
		missing = append(missing, err.Error())
	}
	if len(missing) > 0 {
		return fmt.Errorf("this machine cannot run a real node; it lacks: %s", strings.Join(missing, "; "))
	}
	return nil
}

// Allocate takes a free node index on this machine and sets up its network: the namespace, the
// veth pair and the host's route to the node's pods. Start the cluster's API server at HostIP,
// then Start the node; Teardown releases it.
func Allocate() (Network, error) {
	if err := Check(); err != nil {
		return Network{}, err
	}
	n, err := allocate()
	if err != nil {
		return Network{}, err
	}
	if err := n.setUp(); err != nil {
		return Network{}, errors.Join(err, n.tearDown())
	}
	return n, nil
}

// Start starts containerd, CoreDNS, the kubelet and kube-proxy in the node's network namespace
// and returns when the Node is Ready and CoreDNS answers. On error it stops what it started; the
// network stays (Teardown releases it).
func Start(ctx context.Context, opts Options) (_ *Node, err error) {
	n := &Node{Name: opts.Name, Dir: opts.Dir, Network: opts.Network}
	defer func() {
		if err != nil {
			n.stopProcesses()
			err = fmt.Errorf("node %s: %w", opts.Name, err)
		}
	}()
	if err := CheckCoreDNS("Options.CoreDNS", opts.CoreDNS); err != nil {
		return nil, err
	}
	for _, d := range []string{opts.Dir, n.Network.RunDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := n.writeContainerdConfig(); err != nil {
		return nil, err
	}
	if err := n.startContainerd(opts); err != nil {
		return nil, err
	}
	pause := filepath.Join(opts.Dir, "images", "pause.tar")
	if err := writePauseImage(opts.Binaries.Path(localk8s.PauseBin), pause); err != nil {
		return nil, err
	}
	for _, img := range append([]string{pause}, opts.Images...) {
		if err := ImportImage(n.Network, img); err != nil {
			return nil, err
		}
	}
	if err := bindKubeletClient(ctx, opts.Cluster); err != nil {
		return nil, err
	}
	if err := n.startCoreDNS(ctx, opts); err != nil {
		return nil, err
	}
	if err := n.startKubelet(opts); err != nil {
		return nil, err
	}
	if err := n.startKubeProxy(opts); err != nil {
		return nil, err
	}
	if err := n.waitReady(ctx, opts.Cluster, 2*time.Minute); err != nil {
		return nil, err
	}
	if err := n.waitDNS(ctx, 30*time.Second); err != nil {
		return nil, err
	}
	return n, nil
}

func (n *Node) socket() string { return n.Network.socket() }

// inNamespace is the command line that runs binary with args in the node's network namespace
// only (nsenter --net), so that its mounts stay in the host's mount namespace, where the kubelet,
// containerd and teardown all see them.
func (n *Node) inNamespace(binary string, args ...string) []string {
	return append([]string{"--net=" + n.Network.NamespacePath(), "--", binary}, args...)
}

func (n *Node) start(opts Options, label, binary string, args ...string) (*localk8s.Process, error) {
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		return nil, err
	}
	p, err := localk8s.StartProcess(opts.Name+"/"+label, nsenter, n.inNamespace(binary, args...),
		filepath.Join(opts.Dir, "logs", label+".log"), opts.Detach)
	if err != nil {
		return nil, err
	}
	// nsenter execs the program in place: the pid is the program's. Its children (containerd's
	// shims and their containers) inherit the cgroup, which is how teardown finds them.
	if err := joinCgroup(filepath.Join(n.Network.CgroupName(), label), p.PID()); err != nil {
		p.Kill()
		return nil, err
	}
	return p, nil
}

func (n *Node) startContainerd(opts Options) error {
	bin, err := exec.LookPath("containerd")
	if err != nil {
		return err
	}
	if n.Containerd, err = n.start(opts, "containerd", bin, "--config", n.containerdConfigPath()); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := run("ctr", "--address", n.socket(), "version"); err == nil {
			return nil
		}
		if err := n.Containerd.ExitError(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("containerd did not answer on %s within 30s; last lines of %s:\n%s", n.socket(), n.Containerd.LogPath, localk8s.LogTail(n.Containerd.LogPath, 20))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (n *Node) startKubelet(opts Options) error {
	kubeconfig := filepath.Join(opts.Dir, "kubelet.kubeconfig")
	if err := opts.Cluster.WriteClientKubeconfig(kubeconfig, "system:node:"+opts.Name, "system:nodes"); err != nil {
		return err
	}
	config := filepath.Join(opts.Dir, "kubelet.yaml")
	if err := os.WriteFile(config, []byte(n.kubeletConfig(opts.Cluster.CAFile())), 0o644); err != nil {
		return err
	}
	args := []string{
		"--config=" + config,
		"--kubeconfig=" + kubeconfig,
		"--hostname-override=" + opts.Name,
		"--node-ip=" + n.Network.NodeIP(),
		"--root-dir=" + filepath.Join(opts.Dir, "kubelet"),
		"--v=1",
	}
	if len(opts.Labels) > 0 {
		args = append(args, "--node-labels="+joinLabels(opts.Labels))
	}
	var err error
	n.Kubelet, err = n.start(opts, "kubelet", opts.Binaries.Path(localk8s.KubeletBin), args...)
	return err
}

func joinLabels(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + l[k]
	}
	return strings.Join(parts, ",")
}

// bindKubeletClient lets the API server's kubelet client identity (localk8s.KubeletClientUser)
// use the kubelet API, for logs and exec, and nothing else: RBAC's system:kubelet-api-admin.
func bindKubeletClient(ctx context.Context, c *localk8s.Cluster) error {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	return bindUser(ctx, cs, kubeletClientBinding, "system:kubelet-api-admin", localk8s.KubeletClientUser)
}

// bindUser binds ClusterRole role to user with ClusterRoleBinding name, unless it exists.
func bindUser(ctx context.Context, cs kubernetes.Interface, name, role, user string) error {
	_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ClusterRoleBinding %s: %w", name, err)
	}
	return nil
}

// kubeletClientBinding is the ClusterRoleBinding bindKubeletClient makes.
const kubeletClientBinding = "flotilla:kube-apiserver-kubelet-client"

// startKubeProxy runs kube-proxy in the node's namespace: its iptables rules, which send the
// node's pods' Service traffic to the Services' endpoints, live in that namespace alone.
func (n *Node) startKubeProxy(opts Options) error {
	kubeconfig := filepath.Join(opts.Dir, "kube-proxy.kubeconfig")
	if err := opts.Cluster.WriteClientKubeconfig(kubeconfig, "system:kube-proxy"); err != nil {
		return err
	}
	config := filepath.Join(opts.Dir, "kube-proxy.yaml")
	if err := os.WriteFile(config, []byte(n.kubeProxyConfig(kubeconfig)), 0o644); err != nil {
		return err
	}
	var err error
	n.KubeProxy, err = n.start(opts, "kube-proxy", opts.Binaries.Path(localk8s.KubeProxyBin), "--config="+config, "--v=1")
	return err
}

// waitReady waits for the Node's Ready condition, failing early when the kubelet or containerd
// exits.
func (n *Node) waitReady(ctx context.Context, c *localk8s.Cluster, timeout time.Duration) error {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := "not registered"
	for {
		for _, p := range []*localk8s.Process{n.Kubelet, n.Containerd, n.KubeProxy, n.CoreDNS} {
			if err := p.ExitError(); err != nil {
				return err
			}
		}
		node, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err == nil {
			last = "Ready condition missing"
			for _, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady {
					if cond.Status == corev1.ConditionTrue {
						return nil
					}
					last = fmt.Sprintf("Ready=%s (%s: %s)", cond.Status, cond.Reason, cond.Message)
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the Node did not turn Ready within %s (%s); last lines of %s:\n%s", timeout, last, n.Kubelet.LogPath, localk8s.LogTail(n.Kubelet.LogPath, 20))
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (n *Node) stopProcesses() {
	for _, p := range []*localk8s.Process{n.KubeProxy, n.CoreDNS, n.Kubelet, n.Containerd} {
		if p != nil {
			p.Stop(5 * time.Second)
		}
	}
}

// Stop stops the node and removes everything it made (Teardown).
func (n *Node) Stop() error {
	n.stopProcesses()
	return Teardown(n.Network, n.Dir)
}

// Teardown removes everything a node made, from its network and folder alone: it kills every
// process in the node's cgroup tree (the kubelet, containerd, its shims and containers), unmounts
// what is mounted below the node's folder and run folder, removes the cgroups, the network
// namespace, the veth pair and the run folder. The node's folder stays, with its logs. Doing it
// twice does nothing the second time.
func Teardown(n Network, dir string) error {
	var errs []error
	if err := killCgroup(n.CgroupName(), 20*time.Second); err != nil {
		errs = append(errs, err)
	}
	if err := unmountUnder(dir, n.RunDir()); err != nil {
		errs = append(errs, err)
	}
	if err := removeCgroup(n.CgroupName()); err != nil {
		errs = append(errs, err)
	}
	if err := n.tearDown(); err != nil {
		errs = append(errs, err)
	}
	if err := os.RemoveAll(n.RunDir()); err != nil {
		errs = append(errs, err)
	}
	if left := Leftovers(n, dir); len(left) > 0 {
		errs = append(errs, fmt.Errorf("left behind: %s", strings.Join(left, "; ")))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("tearing down real node %s: %w", n.Namespace(), err)
	}
	return nil
}

// Leftovers lists what of a node is still on the machine: processes in its cgroup tree, mounts
// below its folder or run folder, its cgroups, its network namespace, its link and the host's
// route to its pods. Empty after Teardown.
func Leftovers(n Network, dir string) []string {
	var out []string
	if pids, err := cgroupPIDs(n.CgroupName()); err != nil {
		out = append(out, "cgroups unreadable: "+err.Error())
	} else if len(pids) > 0 {
		out = append(out, fmt.Sprintf("processes %v", sortedKeys(pids)))
	}
	if mounts, err := mountPoints(); err != nil {
		out = append(out, "mounts unreadable: "+err.Error())
	} else {
		for _, m := range mounts {
			if m == dir || strings.HasPrefix(m, dir+"/") || m == n.RunDir() || strings.HasPrefix(m, n.RunDir()+"/") || m == n.NamespacePath() {
				out = append(out, "mount "+m)
			}
		}
	}
	hs, _ := hierarchies()
	for _, h := range hs {
		if _, err := os.Stat(filepath.Join(h, n.CgroupName())); err == nil {
			out = append(out, "cgroup "+filepath.Join(h, n.CgroupName()))
		}
	}
	if _, err := os.Stat(n.NamespacePath()); err == nil {
		out = append(out, "network namespace "+n.Namespace())
	}
	if _, err := run("ip", "link", "show", n.HostLink()); err == nil {
		out = append(out, "link "+n.HostLink())
	}
	if route, _ := run("ip", "route", "show", n.PodCIDR()); route != "" {
		out = append(out, "route "+route)
	}
	return out
}
