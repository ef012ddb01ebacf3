package realnode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// CoreDNS, the cluster DNS of each node, is built by tools/build-coredns.sh from its module
// (pinned in tools/coredns) with only the plugins coreDNSConfig uses.
const (
	// CoreDNSVersion is the release tools/build-coredns.sh builds.
	CoreDNSVersion = "v1.15.0"
	// CoreDNSBinDirEnv names the environment variable that points at the folder
	// tools/build-coredns.sh printed; `make` sets it.
	CoreDNSBinDirEnv = "FLOTILLA_COREDNS_BIN"
	// CoreDNSBin is the binary's name in that folder.
	CoreDNSBin = "coredns"
	// ClusterDomain is the DNS domain of every real node's cluster.
	ClusterDomain = "cluster.local"
	// CoreDNSUser is the user CoreDNS reads its cluster's API server as.
	CoreDNSUser = "system:coredns"
	// coreDNSRBAC names the ClusterRole and ClusterRoleBinding bindCoreDNS makes.
	coreDNSRBAC = "flotilla:coredns"
	// coreDNSAPIQPS is CoreDNS's client rate against its cluster's API server: a list and a
	// watch per resource at start, then watch events.
	coreDNSAPIQPS = 20
)

// errNoCoreDNS says how to get the CoreDNS binary a node needs.
var errNoCoreDNS = errors.New("no CoreDNS binary for the real node's cluster DNS: run `make coredns-bin` (tools/build-coredns.sh) or set " + CoreDNSBinDirEnv + " to the folder it prints")

// FindCoreDNS locates the CoreDNS binary: in the folder named by $FLOTILLA_COREDNS_BIN, else in
// the newest build of CoreDNSVersion in the user cache folder tools/build-coredns.sh writes to.
func FindCoreDNS() (string, error) {
	if dir := os.Getenv(CoreDNSBinDirEnv); dir != "" {
		return checkCoreDNS(filepath.Join(dir, CoreDNSBin))
	}
	root := os.Getenv("FLOTILLA_CACHE_DIR")
	if root == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", errNoCoreDNS
		}
		root = filepath.Join(cache, "flotilla")
	}
	return newestCoreDNS(filepath.Join(root, "coredns-"+CoreDNSVersion+"-*", "bin", CoreDNSBin))
}

// newestCoreDNS is the most recently built binary matching pattern.
func newestCoreDNS(pattern string) (string, error) {
	matches, _ := filepath.Glob(pattern)
	sort.Slice(matches, func(i, j int) bool { return modTime(matches[i]).After(modTime(matches[j])) })
	if len(matches) == 0 {
		return "", fmt.Errorf("%w (none matches %s)", errNoCoreDNS, pattern)
	}
	return matches[0], nil
}

func modTime(path string) time.Time {
	st, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}

// CheckCoreDNS says what is wrong with path, the CoreDNS binary a node is to run, which field
// (an option or a flag) named: Start checks Options.CoreDNS before it starts anything.
func CheckCoreDNS(field, path string) error {
	if path == "" {
		return fmt.Errorf("%s is empty: %w", field, errNoCoreDNS)
	}
	if _, err := checkCoreDNS(path); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}

// checkCoreDNS returns path if it is a file, else errNoCoreDNS naming it.
func checkCoreDNS(path string) (string, error) {
	if st, err := os.Stat(path); err != nil || st.IsDir() {
		return "", fmt.Errorf("%w (no file %s)", errNoCoreDNS, path)
	}
	return path, nil
}

// coreDNSConfig is the node's Corefile: CoreDNS answers on the node's address only, for its own
// cluster's Services (the kubernetes plugin, reading the API server as kubeconfig says) and their
// reverse zones. Reverse names it does not know fall through to nothing (no forwarder: nothing
// leaves the machine), so they fail rather than return NXDOMAIN for addresses of other clusters.
// The records' TTL stays the plugin's 5 s, not kubeadm's 30 s: a name looked up a moment before
// its Service exists is cached as NXDOMAIN for that long, and tests and demos create Services
// and use them at once.
func coreDNSConfig(nodeIP, kubeconfig string) string {
	return fmt.Sprintf(`.:53 {
    bind %s
    errors
    cache 30
    kubernetes %s in-addr.arpa ip6.arpa {
        kubeconfig %s
        fallthrough in-addr.arpa ip6.arpa
        apiserver_qps %d
    }
}
`, nodeIP, ClusterDomain, kubeconfig, coreDNSAPIQPS)
}

// coreDNSRules are what CoreDNS's kubernetes plugin reads without `pods verified` (so no pods):
// kubeadm's system:coredns ClusterRole less pods and the Endpoints it no longer watches.
func coreDNSRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"services", "namespaces"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
	}
}

// bindCoreDNS gives CoreDNSUser coreDNSRules and nothing else, creating the ClusterRole and its
// binding, or setting the role's rules back if they differ.
func bindCoreDNS(ctx context.Context, c *localk8s.Cluster) error {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	roles := cs.RbacV1().ClusterRoles()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: coreDNSRBAC}, Rules: coreDNSRules()}
	if _, err := roles.Create(ctx, role, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		old, err := roles.Get(ctx, coreDNSRBAC, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !slices.EqualFunc(old.Rules, role.Rules, rulesEqual) {
			old.Rules = role.Rules
			if _, err := roles.Update(ctx, old, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("ClusterRole %s: setting its rules: %w", coreDNSRBAC, err)
			}
		}
	} else if err != nil {
		return fmt.Errorf("ClusterRole %s: %w", coreDNSRBAC, err)
	}
	return bindUser(ctx, cs, coreDNSRBAC, coreDNSRBAC, CoreDNSUser)
}

func rulesEqual(a, b rbacv1.PolicyRule) bool {
	return slices.Equal(a.APIGroups, b.APIGroups) && slices.Equal(a.Resources, b.Resources) &&
		slices.Equal(a.Verbs, b.Verbs) && slices.Equal(a.ResourceNames, b.ResourceNames) &&
		slices.Equal(a.NonResourceURLs, b.NonResourceURLs)
}

// startCoreDNS runs CoreDNS in the node's namespace and cgroup, as kube-proxy, reading its
// cluster as CoreDNSUser; waitDNS waits until it answers.
func (n *Node) startCoreDNS(ctx context.Context, opts Options) error {
	if err := bindCoreDNS(ctx, opts.Cluster); err != nil {
		return err
	}
	kubeconfig := filepath.Join(opts.Dir, "coredns.kubeconfig")
	if err := opts.Cluster.WriteClientKubeconfig(kubeconfig, CoreDNSUser); err != nil {
		return err
	}
	config := filepath.Join(opts.Dir, "Corefile")
	if err := os.WriteFile(config, []byte(coreDNSConfig(n.Network.NodeIP(), kubeconfig)), 0o644); err != nil {
		return err
	}
	var err error
	n.CoreDNS, err = n.start(opts, "coredns", opts.CoreDNS, "-conf", config)
	return err
}

// kubernetesServiceName is the kubernetes Service's name in the cluster's DNS.
const kubernetesServiceName = "kubernetes.default.svc." + ClusterDomain + "."

// waitDNS waits until the node's CoreDNS answers for the kubernetes Service, which every cluster
// has: it then serves on its address and has read its cluster's Services.
func (n *Node) waitDNS(ctx context.Context, timeout time.Duration) error {
	r := Resolver(net.JoinHostPort(n.Network.NodeIP(), "53"))
	deadline := time.Now().Add(timeout)
	var last string
	for {
		if err := n.CoreDNS.ExitError(); err != nil {
			return fmt.Errorf("CoreDNS: %w; last lines of %s:\n%s", err, n.CoreDNS.LogPath, localk8s.LogTail(n.CoreDNS.LogPath, 20))
		}
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		addrs, err := r.LookupHost(qctx, kubernetesServiceName)
		cancel()
		if err == nil && len(addrs) > 0 {
			return nil
		}
		last = lookupError(err)
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("CoreDNS did not answer for %s at %s:53 within %s (%s); last lines of %s:\n%s",
				kubernetesServiceName, n.Network.NodeIP(), timeout, last, n.CoreDNS.LogPath, localk8s.LogTail(n.CoreDNS.LogPath, 20))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// lookupError describes a failed lookup by Resolver without the server Go's error names: the
// one in /etc/resolv.conf, which Resolver does not ask.
func lookupError(err error) string {
	var de *net.DNSError
	switch {
	case err == nil:
		return "no address"
	case errors.As(err, &de) && de.IsNotFound:
		return "NXDOMAIN"
	case errors.As(err, &de):
		return de.Err
	default:
		return err.Error()
	}
}

// Resolver asks only the DNS server at addr (host:port), over UDP or TCP as Go's resolver
// chooses, ignoring /etc/resolv.conf.
func Resolver(addr string) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
}
