//go:build integration

package realnode

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/install"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestRealNode runs a real node for each of two clusters: each kubelet registers and turns
// Ready; a pod of Flotilla's own image (built from this module, imported from its archive) really
// runs with an address from its node's pod range, and its output comes back through the API server
// (which reaches the kubelet at the node's address); a pod reaches its API server through the
// kubernetes Service (kube-proxy) with its service account; a pod of one cluster reaches every
// cluster's API server but not the other cluster's node or pods; a pod resolves its own cluster's
// Services, and only those, through its node's CoreDNS; and Stop leaves no process, mount,
// cgroup, network namespace, link or route behind.
func TestRealNode(t *testing.T) {
	if err := Check(); err != nil {
		t.Fatal(err) // a machine that cannot run a node fails this test, saying what it lacks
	}
	bins, err := localk8s.FindBinaries()
	if err != nil {
		t.Fatal(err)
	}
	coreDNS, err := FindCoreDNS()
	if err != nil {
		t.Fatal(err)
	}
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	dir := t.TempDir()
	archive, ref, _ := testenv.FlotillaImage(t, filepath.Join(dir, "image"))
	etcd, err := localk8s.StartEtcd(ctx, localk8s.EtcdOptions{Name: "etcd", Dir: filepath.Join(dir, "etcd"), Binaries: bins})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Stop)
	a := startWithNode(ctx, t, bins, coreDNS, etcd, filepath.Join(dir, "a"), "rn-a", archive)
	b := startWithNode(ctx, t, bins, coreDNS, etcd, filepath.Join(dir, "b"), "rn-b", archive)

	cs := kubernetes.NewForConfigOrDie(a.cluster.Config)
	n, err := cs.CoreV1().Nodes().Get(ctx, a.node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Labels["flotilla.io/real-node"] != "true" {
		t.Errorf("node labels %v lack flotilla.io/real-node=true", n.Labels)
	}

	got, out := runPod(ctx, t, cs, a.node, ref, "hello", "version")
	_, podNet, _ := net.ParseCIDR(a.network.PodCIDR())
	if ip := net.ParseIP(got.Status.PodIP); ip == nil || !podNet.Contains(ip) {
		t.Errorf("pod IP %q is not in the node's pod range %s", got.Status.PodIP, a.network.PodCIDR())
	}
	if id := got.Status.ContainerStatuses[0].ContainerID; !strings.HasPrefix(id, "containerd://") {
		t.Errorf("container ID %q: want one containerd made", id)
	}
	if !strings.Contains(out, "flotilla") {
		t.Errorf("container output %q: want flotilla's version line", out)
	}
	// The API server read that output as its kubelet client identity, which may use the kubelet
	// API and nothing else: asked for the user and groups its certificate carries.
	kubeletClient := certSubject(t, a.cluster.KubeletClientCertFile())
	for _, tc := range []struct {
		attrs authorizationv1.ResourceAttributes
		want  bool
	}{
		{authorizationv1.ResourceAttributes{Verb: "get", Resource: "nodes", Subresource: "proxy", Name: a.node.Name}, true},
		{authorizationv1.ResourceAttributes{Verb: "list", Resource: "secrets"}, false},
		{authorizationv1.ResourceAttributes{Verb: "create", Resource: "pods", Namespace: "default"}, false},
		{authorizationv1.ResourceAttributes{Verb: "delete", Resource: "nodes", Name: a.node.Name}, false},
	} {
		sar, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: kubeletClient.CommonName, Groups: kubeletClient.Organization, ResourceAttributes: &tc.attrs,
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sar.Status.Allowed != tc.want {
			t.Errorf("the API server's kubelet client may %s %s/%s: %v, want %v", tc.attrs.Verb, tc.attrs.Resource, tc.attrs.Subresource, sar.Status.Allowed, tc.want)
		}
	}

	// A pod reaches the API server as a pod does: through the kubernetes Service (kube-proxy's
	// rules in the node's namespace), with its service account's token and the cluster's CA
	// (flotilla falls back to the in-cluster configuration, as kubectl does).
	if _, err := install.Embedded(ctx, a.cluster.Config, install.Options{}); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(a.cluster.Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{
		&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "seen-from-a-pod"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "read-clusters"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{clusterv1.GroupVersion.Group}, Resources: []string{"managedclusters"}, Verbs: []string{"get", "list"},
		}}},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "read-clusters"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "read-clusters"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "default", Name: "default"}},
		},
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	if _, out := runPod(ctx, t, cs, a.node, ref, "in-cluster", "get", "clusters"); !strings.Contains(out, "seen-from-a-pod") {
		t.Errorf("flotilla get clusters in a pod printed %q: want the cluster seen-from-a-pod", out)
	}

	// Isolation, seen from inside a pod of cluster b (its sandbox's network namespace): both API
	// servers answer; cluster a's node and pods do not (dropped, so the connection times out
	// rather than being refused).
	csB := kubernetes.NewForConfigOrDie(b.cluster.Config)
	sleeper := startPod(ctx, t, csB, b.node, PauseImage, "sleeper")
	podNS := podNamespace(t, b.network, sleeper)
	aPod := startPod(ctx, t, cs, a.node, PauseImage, "target")
	for _, tc := range []struct {
		addr      string
		reachable bool
	}{
		{hostPort(t, b.cluster.Server), true},
		{hostPort(t, a.cluster.Server), true},
		{net.JoinHostPort(a.network.NodeIP(), "10250"), false},
		{net.JoinHostPort(aPod.Status.PodIP, "80"), false},
	} {
		if got := dialFrom(podNS, tc.addr); got != tc.reachable {
			t.Errorf("from a pod of cluster b, %s reachable = %v, want %v", tc.addr, got, tc.reachable)
		}
	}
	// This machine may not forward IPv4 at all, which isolates the nodes by itself: the nodes'
	// own rules, which hold where the host forwards, are checked as rules.
	rules, err := run("ip", "netns", "exec", b.network.Namespace(), "iptables", "-w", "-S", "FORWARD")
	if err != nil || !strings.Contains(rules, "-A FORWARD -j "+isolationChain) {
		t.Errorf("node b's FORWARD chain does not jump to %s (%v):\n%s", isolationChain, err, rules)
	}
	rules, _ = run("ip", "netns", "exec", b.network.Namespace(), "iptables", "-w", "-S", isolationChain)
	for _, want := range []string{"-d " + b.network.PodCIDR() + " -j RETURN", "-d " + podRanges + " -j DROP", "-d " + nodeAddresses + " -j DROP"} {
		if !strings.Contains(rules, want) {
			t.Errorf("node b's %s lacks %q:\n%s", isolationChain, want, rules)
		}
	}

	checkDNS(ctx, t, a, b, podNS)

	// Everything the nodes made, before and after Stop.
	for _, x := range []*withNode{a, b} {
		pids, err := cgroupPIDs(x.network.CgroupName())
		if err != nil || len(pids) < 4 || !pids[x.node.CoreDNS.PID()] {
			t.Fatalf("processes in node %s's cgroup: %v, %v; want at least the kubelet, kube-proxy, containerd and CoreDNS (pid %d)", x.node.Name, pids, err, x.node.CoreDNS.PID())
		}
		if err := x.node.Stop(); err != nil {
			t.Fatal(err)
		}
		assertGone(t, x.network, x.node.Dir, pids)
		if err := Teardown(x.network, x.node.Dir); err != nil {
			t.Errorf("a second teardown: %v", err)
		}
	}
}

// certSubject is the subject (user and groups) of the certificate in file.
func certSubject(t *testing.T, file string) pkix.Name {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("%s holds no PEM block", file)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert.Subject
}

type withNode struct {
	cluster *localk8s.Cluster
	network Network
	node    *Node
}

// startWithNode starts a cluster whose API server serves at a new node's link, and the node.
func startWithNode(ctx context.Context, t *testing.T, bins localk8s.Binaries, coreDNS string, etcd *localk8s.Etcd, dir, name, image string) *withNode {
	t.Helper()
	x := &withNode{}
	var err error
	if x.network, err = Allocate(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if x.node != nil {
			x.node.stopProcesses()
		}
		if err := Teardown(x.network, filepath.Join(dir, "node")); err != nil {
			t.Error(err)
		}
	})
	x.cluster, err = localk8s.StartCluster(ctx, localk8s.ClusterOptions{
		Name: name, Dir: filepath.Join(dir, "cluster"), Binaries: bins, EtcdURL: etcd.URL,
		Scheduler: true, Address: x.network.HostIP(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.cluster.Stop)
	x.node, err = Start(ctx, Options{
		Name: name + "-node", Dir: filepath.Join(dir, "node"), Network: x.network, Cluster: x.cluster,
		Binaries: bins, CoreDNS: coreDNS, Images: []string{image}, Labels: map[string]string{"flotilla.io/real-node": "true"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Start returns once the node's CoreDNS answers: no retry here.
	if got := dnsQuery(x.network.NodeIP() + " " + kubernetesServiceName); got != "10.96.0.1" {
		t.Errorf("node %s's CoreDNS right after Start: %s is %q, want 10.96.0.1", x.node.Name, kubernetesServiceName, got)
	}
	return x
}

// assertGone checks that nothing of a stopped node is left: its processes (looked up by pid, not
// only in its cgroup), mounts, cgroups, the network namespace, the link and the host's route.
func assertGone(t *testing.T, network Network, dir string, pids map[int]bool) {
	t.Helper()
	for pid := range pids {
		if cmd, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline")); len(cmd) > 0 {
			t.Errorf("process %d (%s) of the node still runs after Stop", pid, strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	if left := Leftovers(network, dir); len(left) > 0 {
		t.Errorf("left after Stop: %s", strings.Join(left, "; "))
	}
}

// startPod starts a pod of image (one that runs until stopped) on node and waits until it runs.
func startPod(ctx context.Context, t *testing.T, cs kubernetes.Interface, node *Node, image, name string) *corev1.Pod {
	t.Helper()
	createPod(ctx, t, cs, node, image, name)
	for {
		got, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err == nil && got.Status.Phase == corev1.PodRunning && got.Status.PodIP != "" {
			return got
		}
		if ctx.Err() != nil {
			t.Fatalf("pod %s did not run: %v", name, got)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// podNamespace is the network namespace of a running pod's sandbox: containerd keeps it under its
// state folder (netns_mounts_under_state_dir); the pod is the node's only running one.
func podNamespace(t *testing.T, network Network, pod *corev1.Pod) string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(network.RunDir(), "state", "io.containerd.grpc.v1.cri", "netns", "cni-*"))
	if len(matches) != 1 {
		t.Fatalf("pod %s: want its node's one pod network namespace, found %v", pod.Name, matches)
	}
	return matches[0]
}

// dialFrom reports whether a TCP connection to addr from network namespace ns gets an answer
// (accepted or refused) within two seconds, using bash's /dev/tcp in that namespace.
func dialFrom(ns, addr string) bool {
	host, port, _ := net.SplitHostPort(addr)
	out, err := exec.Command("nsenter", "--net="+ns, "--", "timeout", "2", "bash", "-c",
		"exec 3<>/dev/tcp/"+host+"/"+port).CombinedOutput()
	return err == nil || strings.Contains(string(out), "refused")
}

func hostPort(t *testing.T, server string) string {
	t.Helper()
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// runPod runs flotilla with args in a pod on node, waits for it to succeed and returns it and its
// output, read through the API server (which reaches the kubelet at the node's address).
func runPod(ctx context.Context, t *testing.T, cs kubernetes.Interface, node *Node, image, name string, args ...string) (*corev1.Pod, string) {
	t.Helper()
	createPod(ctx, t, cs, node, image, name, args...)
	var got *corev1.Pod
	var err error
	for {
		got, err = cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err == nil && (got.Status.Phase == corev1.PodSucceeded || got.Status.Phase == corev1.PodFailed) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("pod %s did not finish: %v; kubelet log:\n%s", name, got, localk8s.LogTail(node.Kubelet.LogPath, 30))
		}
		time.Sleep(300 * time.Millisecond)
	}
	logs, err := cs.CoreV1().Pods("default").GetLogs(name, &corev1.PodLogOptions{}).Stream(ctx)
	if err != nil {
		t.Fatalf("reading pod %s's output through the API server: %v", name, err)
	}
	out, _ := io.ReadAll(logs)
	_ = logs.Close()
	if got.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("pod %s %s: %+v; output:\n%s", name, got.Status.Phase, got.Status.ContainerStatuses, out)
	}
	return got, string(out)
}

// createPod creates a pod of one container of image with args on node.
func createPod(ctx context.Context, t *testing.T, cs kubernetes.Interface, node *Node, image, name string, args ...string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			NodeSelector:  map[string]string{"kubernetes.io/hostname": node.Name},
			Containers: []corev1.Container{{
				Name: "flotilla", Image: image, ImagePullPolicy: corev1.PullNever, Args: args,
			}},
		},
	}
	// The service-account controller makes the namespace's default ServiceAccount, which admission
	// wants, shortly after the cluster starts.
	for {
		_, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
		if err == nil {
			break
		}
		if !strings.Contains(err.Error(), "service account") || ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
