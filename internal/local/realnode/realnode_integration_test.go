//go:build integration

package realnode

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/ociimage"
)

// TestRealNode runs a real node for a cluster: the kubelet registers and turns Ready, a pod of
// Flotilla's own image (built from this module, imported from its archive) really runs on it
// with an address from the node's pod range, its output comes back through the API server (which
// reaches the kubelet on the node's address), and Stop leaves no process, mount, cgroup, network
// namespace or link behind.
func TestRealNode(t *testing.T) {
	if err := Check(); err != nil {
		t.Fatal(err) // a machine that cannot run a node fails this test, saying what it lacks
	}
	bins, err := localk8s.FindBinaries()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()

	archive, ref := buildFlotillaImage(t, filepath.Join(dir, "image"))

	network, err := Allocate()
	if err != nil {
		t.Fatal(err)
	}
	var node *Node
	t.Cleanup(func() {
		if node != nil {
			node.stopProcesses()
		}
		if err := Teardown(network, filepath.Join(dir, "node")); err != nil {
			t.Error(err)
		}
	})
	etcd, err := localk8s.StartEtcd(ctx, localk8s.EtcdOptions{Name: "etcd", Dir: filepath.Join(dir, "etcd"), Binaries: bins})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Stop)
	cluster, err := localk8s.StartCluster(ctx, localk8s.ClusterOptions{
		Name: "rn", Dir: filepath.Join(dir, "rn"), Binaries: bins, EtcdURL: etcd.URL,
		Scheduler: true, Address: network.HostIP(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Stop)

	node, err = Start(ctx, Options{
		Name: "rn-node", Dir: filepath.Join(dir, "node"), Network: network, Cluster: cluster,
		Binaries: bins, Images: []string{archive}, Labels: map[string]string{"flotilla.io/real-node": "true"},
	})
	if err != nil {
		t.Fatal(err)
	}

	cs := kubernetes.NewForConfigOrDie(cluster.Config)
	n, err := cs.CoreV1().Nodes().Get(ctx, "rn-node", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Labels["flotilla.io/real-node"] != "true" {
		t.Errorf("node labels %v lack flotilla.io/real-node=true", n.Labels)
	}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			NodeSelector:  map[string]string{"kubernetes.io/hostname": "rn-node"},
			Containers: []corev1.Container{{
				Name: "flotilla", Image: ref, ImagePullPolicy: corev1.PullNever, Args: []string{"version"},
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
	var got *corev1.Pod
	for {
		got, err = cs.CoreV1().Pods("default").Get(ctx, "hello", metav1.GetOptions{})
		if err == nil && (got.Status.Phase == corev1.PodSucceeded || got.Status.Phase == corev1.PodFailed) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("pod hello did not finish: %+v; kubelet log:\n%s", got.Status, localk8s.LogTail(node.Kubelet.LogPath, 30))
		}
		time.Sleep(300 * time.Millisecond)
	}
	if got.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("pod hello %s: %+v", got.Status.Phase, got.Status.ContainerStatuses)
	}
	_, podNet, _ := net.ParseCIDR(network.PodCIDR())
	if ip := net.ParseIP(got.Status.PodIP); ip == nil || !podNet.Contains(ip) {
		t.Errorf("pod IP %q is not in the node's pod range %s", got.Status.PodIP, network.PodCIDR())
	}
	if id := got.Status.ContainerStatuses[0].ContainerID; !strings.HasPrefix(id, "containerd://") {
		t.Errorf("container ID %q: want one containerd made", id)
	}
	logs, err := cs.CoreV1().Pods("default").GetLogs("hello", &corev1.PodLogOptions{}).Stream(ctx)
	if err != nil {
		t.Fatalf("reading the container's output through the API server: %v", err)
	}
	out, _ := io.ReadAll(logs)
	_ = logs.Close()
	if !strings.Contains(string(out), "flotilla") {
		t.Errorf("container output %q: want flotilla's version line", out)
	}

	// Everything the node made, before and after Stop.
	pids, err := cgroupPIDs(network.CgroupName())
	if err != nil || len(pids) < 2 {
		t.Fatalf("processes in the node's cgroup: %v, %v; want at least the kubelet and containerd", pids, err)
	}
	if err := node.Stop(); err != nil {
		t.Fatal(err)
	}
	for pid := range pids {
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil {
			if cmd, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline")); len(cmd) > 0 {
				t.Errorf("process %d (%s) of the node still runs after Stop", pid, strings.ReplaceAll(string(cmd), "\x00", " "))
			}
		}
	}
	mounts, err := mountPoints()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mounts {
		if strings.HasPrefix(m, node.Dir+"/") || strings.HasPrefix(m, network.RunDir()) || m == network.NamespacePath() {
			t.Errorf("mount %s left after Stop", m)
		}
	}
	hs, _ := hierarchies()
	for _, h := range hs {
		if _, err := os.Stat(filepath.Join(h, network.CgroupName())); err == nil {
			t.Errorf("cgroup %s left after Stop", filepath.Join(h, network.CgroupName()))
		}
	}
	if _, err := os.Stat(network.NamespacePath()); err == nil {
		t.Errorf("network namespace %s left after Stop", network.Namespace())
	}
	if out, err := run("ip", "link", "show", network.HostLink()); err == nil {
		t.Errorf("link %s left after Stop: %s", network.HostLink(), out)
	}
	if out, _ := run("ip", "route", "show", network.PodCIDR()); out != "" {
		t.Errorf("host route %s left after Stop", out)
	}
	if err := Teardown(network, node.Dir); err != nil {
		t.Errorf("a second teardown: %v", err)
	}
}

// buildFlotillaImage builds ./cmd/flotilla statically for this machine and packs it as make image
// does, returning the archive for this platform and the image's reference.
func buildFlotillaImage(t *testing.T, dir string) (archive, ref string) {
	t.Helper()
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "flotilla")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/flotilla")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building flotilla: %v\n%s", err, out)
	}
	ref = "ghcr.io/flotilla/flotilla:realnode-test"
	p := ociimage.Platform{OS: "linux", Architecture: runtime.GOARCH}
	im, err := ociimage.Build(ociimage.Spec{Ref: ref, Version: "test", Commit: "test", Created: time.Unix(0, 0), Binaries: []ociimage.Binary{{Platform: p, Path: bin}}})
	if err != nil {
		t.Fatal(err)
	}
	arts, err := im.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range arts {
		if a.Platform == p.String() {
			return a.Path, ref
		}
	}
	t.Fatalf("no archive for %s among %+v", p, arts)
	return "", ""
}
