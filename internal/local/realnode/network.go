package realnode

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

const (
	isolationChain = "FLOTILLA-ISOLATION"
	// podRanges holds every node's pod range; nodeAddresses matches every node's own address,
	// 10.250.*.2 (a mask iptables takes, though not a prefix).
	podRanges     = "10.251.0.0/16"
	nodeAddresses = "10.250.0.2/255.255.0.255"
)

// maxIndex bounds N: 10.250.N.0/24 and 10.251.N.0/24 must be valid networks.
const maxIndex = 250

// Network is one node's addresses and kernel names.
type Network struct {
	// Index is N, unique among the nodes running on this machine.
	Index int
}

// Namespace is the node's network namespace, a file in /run/netns.
func (n Network) Namespace() string { return "flotilla-rn" + strconv.Itoa(n.Index) }

// NamespacePath is the namespace's bind mount, which nsenter enters.
func (n Network) NamespacePath() string { return "/run/netns/" + n.Namespace() }

// HostLink is the host's end of the node's veth pair (at most 15 characters, as Linux requires).
func (n Network) HostLink() string { return "flrn" + strconv.Itoa(n.Index) }

// HostIP is the host's address on the link: the cluster's API server serves there.
func (n Network) HostIP() string { return fmt.Sprintf("10.250.%d.1", n.Index) }

// NodeIP is the node's address: the kubelet's, and the Node's InternalIP.
func (n Network) NodeIP() string { return fmt.Sprintf("10.250.%d.2", n.Index) }

// PodCIDR is the range the node's pods get their addresses from.
func (n Network) PodCIDR() string { return fmt.Sprintf("10.251.%d.0/24", n.Index) }

// socket is the node's containerd socket.
func (n Network) socket() string { return n.RunDir() + "/containerd.sock" }

// CgroupName is the node's cgroup in every hierarchy, and the kubelet's cgroupRoot.
func (n Network) CgroupName() string { return "flotilla-rn" + strconv.Itoa(n.Index) }

// RunDir holds containerd's socket and state: short paths, as a unix socket's is at most 107 bytes.
func (n Network) RunDir() string { return "/run/flotilla-rn" + strconv.Itoa(n.Index) }

// allocate takes the first free index by creating its network namespace, which fails if another
// node (of this fleet or another one on the machine) holds it.
func allocate() (Network, error) {
	for i := 1; i <= maxIndex; i++ {
		n := Network{Index: i}
		out, err := run("ip", "netns", "add", n.Namespace())
		if err == nil {
			return n, nil
		}
		if !strings.Contains(out, "File exists") {
			return Network{}, fmt.Errorf("creating network namespace %s: %w", n.Namespace(), err)
		}
	}
	return Network{}, fmt.Errorf("every real-node index 1-%d is taken (network namespaces flotilla-rn*): tear down fleets that are no longer used (flotilla dev down)", maxIndex)
}

// setUp links an allocated namespace to the host and routes the node's pod range to it.
func (n Network) setUp() error {
	peer := n.HostLink() + "p"
	ns := n.Namespace()
	steps := [][]string{
		{"ip", "link", "add", n.HostLink(), "type", "veth", "peer", "name", peer},
		{"ip", "link", "set", peer, "netns", ns},
		{"ip", "addr", "add", n.HostIP() + "/24", "dev", n.HostLink()},
		{"ip", "link", "set", n.HostLink(), "up"},
		{"ip", "-n", ns, "link", "set", "lo", "up"},
		{"ip", "-n", ns, "link", "set", peer, "name", "eth0"},
		{"ip", "-n", ns, "addr", "add", n.NodeIP() + "/24", "dev", "eth0"},
		{"ip", "-n", ns, "link", "set", "eth0", "up"},
		{"ip", "-n", ns, "route", "add", "default", "via", n.HostIP()},
		{"ip", "route", "add", n.PodCIDR(), "via", n.NodeIP(), "dev", n.HostLink()},
		// Isolation: the node forwards nothing to another node or its pods, whatever the host
		// does (a machine that forwards IPv4 would otherwise route between them). The host's
		// addresses, where every cluster's API server serves, stay reachable. The chain lives in
		// the node's namespace and goes with it.
		{"ip", "netns", "exec", ns, "iptables", "-w", "-N", isolationChain},
		{"ip", "netns", "exec", ns, "iptables", "-w", "-A", isolationChain, "-d", n.PodCIDR(), "-j", "RETURN"},
		{"ip", "netns", "exec", ns, "iptables", "-w", "-A", isolationChain, "-d", podRanges, "-j", "DROP"},
		{"ip", "netns", "exec", ns, "iptables", "-w", "-A", isolationChain, "-d", nodeAddresses, "-j", "DROP"},
		{"ip", "netns", "exec", ns, "iptables", "-w", "-I", "FORWARD", "1", "-j", isolationChain},
	}
	for _, s := range steps {
		if out, err := run(s[0], s[1:]...); err != nil {
			return fmt.Errorf("setting up node network %s: %s: %w: %s", ns, strings.Join(s, " "), err, out)
		}
	}
	return nil
}

// Release tears down a network whose node never started (Teardown does it for one that did).
func (n Network) Release() error { return n.tearDown() }

// tearDown deletes the host's link (its routes go with it) and the namespace. Both may already be
// gone.
func (n Network) tearDown() error {
	var errs []error
	if out, err := run("ip", "link", "del", n.HostLink()); err != nil && !notFound(out) {
		errs = append(errs, fmt.Errorf("deleting link %s: %w: %s", n.HostLink(), err, out))
	}
	if out, err := run("ip", "netns", "del", n.Namespace()); err != nil && !notFound(out) {
		errs = append(errs, fmt.Errorf("deleting network namespace %s: %w: %s", n.Namespace(), err, out))
	}
	return errors.Join(errs...)
}

func notFound(out string) bool {
	return strings.Contains(out, "Cannot find device") || strings.Contains(out, "No such file")
}

// run runs a command and returns its combined output.
func run(name string, args ...string) (string, error) {
	var out bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}
