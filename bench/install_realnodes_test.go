//go:build integration

package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/local/devfleet"
	"github.com/flotilla/flotilla/internal/local/fleet"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/realnode"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// realInstall is one run of the install modes on real nodes (installOnRealNodes).
type realInstall struct {
	importS            float64 // mean seconds to import the image archive into one node
	initS, joinS       float64 // init --install to its return; join --install to Available
	hubMiB, hubCPU     float64 // the hub container's working set and CPU (% of a core) at rest
	hubRSS             float64 // the hub process's resident memory at rest (as BenchmarkInstall reads it on process-runtime nodes)
	nodeMiB            float64 // one real node's own programs (kubelet, containerd and its shims, kube-proxy): working set
	clusters           int     // ManagedClusters (with lease renewals) for the figures below
	scaleMiB, scaleCPU float64 // the hub container's working set and CPU with clusters
	peakMiB            float64 // the hub container's peak usage over the run
	registeredS        float64 // from the first create until the hub had set every cluster up
	requestMiB         float64 // the chart's memory request and limit for the hub
	limitMiB           float64
}

// installOnRealNodes runs what BenchmarkInstall times on process-runtime nodes on a fleet with
// real nodes (flotilla dev up --real-nodes): the image imported into each node's containerd
// (timed), `flotilla init --install --replicas 1` and `flotilla join --install` with the pods as
// containers, then the hub container's memory and CPU from its own cgroup, at rest and with
// clusters accepted ManagedClusters whose leases a load generator renews (bench-hub's), set
// against the chart's requests and limits.
func installOnRealNodes(b *testing.B, bins localk8s.Binaries, clusters int, rest, window time.Duration) realInstall {
	b.Helper()
	if err := realnode.Check(); err != nil {
		b.Fatal(err)
	}
	coreDNS, err := realnode.FindCoreDNS()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	dir := b.TempDir()
	archive, ref, _ := testenv.FlotillaImage(b, filepath.Join(dir, "image"))
	state := filepath.Join(dir, "fleet")
	spec := &fleet.Fleet{Clusters: []fleet.Cluster{{Name: "edge", NodePools: []fleet.NodePool{{Name: "cpu", Count: 1}}}}}
	st, err := devfleet.Up(ctx, devfleet.UpOptions{
		StateDir: state, Fleet: spec, FleetSource: "bench", Binaries: bins, RealNodes: true, CoreDNS: coreDNS, Out: io.Discard, Clock: clock.RealClock{},
	})
	defer func() {
		if err := devfleet.Down(state, io.Discard); err != nil {
			b.Error(err)
		}
	}()
	if err != nil {
		b.Fatal(err)
	}
	var r realInstall
	var hubNode, hubKC, edgeKC string
	var hubNet realnode.Network
	for _, c := range st.Clusters {
		if c.RealNode == nil {
			b.Fatalf("cluster %s has no real node", c.Name)
		}
		n := realnode.Network{Index: c.RealNode.Index}
		start := time.Now()
		if err := realnode.ImportImage(n, archive); err != nil {
			b.Fatal(err)
		}
		r.importS += time.Since(start).Seconds() / float64(len(st.Clusters))
		if c.Name == localk8s.HubName {
			hubNet, hubNode, hubKC = n, c.RealNode.Node, c.Kubeconfig
		} else {
			edgeKC = c.Kubeconfig
		}
	}
	hubCfg, err := localk8s.RESTConfigFromKubeconfig(hubKC)
	if err != nil {
		b.Fatal(err)
	}
	// The load generator renews clusters/60 leases a second: no client-side limit in its way.
	hubCfg.QPS, hubCfg.Burst = 1000, 2000
	hubCS := kubernetes.NewForConfigOrDie(hubCfg)
	if !smoke() {
		time.Sleep(settle) // as on process-runtime nodes
	}

	bootstrap := filepath.Join(dir, "bootstrap.kubeconfig")
	start := time.Now()
	runCLI(b, start, "init", "--install", "--replicas", "1", "--kubeconfig", hubKC, "--image", ref, "--image-pull-policy", "Never",
		"--bootstrap-kubeconfig", bootstrap, "--wait", installWait.String())
	r.initS = time.Since(start).Seconds()
	start = time.Now()
	runCLI(b, start, "join", "--install", "--cluster-name", "edge", "--bootstrap-kubeconfig", bootstrap, "--kubeconfig", edgeKC,
		"--image", ref, "--image-pull-policy", "Never", "--set", `nodeSelector.kubernetes\.io/hostname=edge-node`, "--wait", installWait.String())
	acceptAndWaitAvailable(b, hubCfg, hubCS, "edge")
	r.joinS = time.Since(start).Seconds()

	hub := hubContainer(ctx, b, hubCS, hubNet, hubNode)
	r.requestMiB, r.limitMiB = mib(hub.request), mib(hub.limit)
	time.Sleep(rest)
	r.hubMiB, r.hubCPU = mib(hub.workingSet(b)), hub.cpuPercent(b, window)
	r.hubRSS = mib(statusBytesOf(b, hub.pid(b), "flotilla hub (container)", "VmRSS"))
	r.nodeMiB = mib(nodeOverhead(b, hubNet))

	// With clusters: accepted ManagedClusters reporting Available, leases renewed (bench-hub's load).
	cl, err := client.New(hubCfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	names := clusterNames(clusters)
	start = time.Now()
	if err := parallel(names, createWorkers, func(name string) error {
		return createCluster(ctx, cl, name, fleetLeaseSeconds)
	}); err != nil {
		b.Fatal(err)
	}
	lg := startLoadGen(hubCS, names, time.Duration(fleetLeaseSeconds)*time.Second)
	defer lg.stop()
	// Read every 5 s: each read lists every cluster's objects, a load of its own on the API server
	// (read every 100 ms, it slowed the hub's writes tenfold).
	for deadline := time.Now().Add(30 * time.Minute); ; time.Sleep(5 * time.Second) {
		s, err := fleetState(ctx, cl, hubCS, clusters)
		if err == nil && s.done(clusters) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the hub in its container did not set up %d clusters in 30 minutes: %+v, %v", clusters, s, err)
		}
	}
	r.clusters, r.registeredS = clusters, time.Since(start).Seconds()
	time.Sleep(rest)
	r.scaleMiB, r.scaleCPU = mib(hub.workingSet(b)), hub.cpuPercent(b, window)
	r.peakMiB = mib(hub.peak(b))
	if r.limitMiB > 0 && r.peakMiB > r.limitMiB {
		b.Errorf("the hub container peaked at %.0f MiB with %d clusters, over the chart's limit of %.0f MiB", r.peakMiB, clusters, r.limitMiB)
	}
	fmt.Fprintf(os.Stderr, "install-bench: real nodes: image import %.1f s per node; init --install %.1f s; join --install to Available %.1f s; "+
		"hub container at rest %.0f MiB working set (%.0f MiB resident) %.1f%% of a core; a node's own programs %.0f MiB; with %d clusters (set up in %.0f s) %.0f MiB %.1f%% of a core, peak %.0f MiB; chart request %.0f MiB, limit %.0f MiB\n",
		r.importS, r.initS, r.joinS, r.hubMiB, r.hubRSS, r.hubCPU, r.nodeMiB, clusters, r.registeredS, r.scaleMiB, r.scaleCPU, r.peakMiB, r.requestMiB, r.limitMiB)
	return r
}

// containerCgroup is one container's cgroup v1 folders (memory, cpuacct) on a real node, with
// the memory its pod spec requests and is limited to.
type containerCgroup struct {
	memory, cpuacct string
	request, limit  int64
}

// hubContainer finds the hub's one pod on node and its container's cgroups: the kubelet (cgroupfs
// driver) makes them under the node's cgroup root as kubepods[/<qos>]/pod<UID>/<container ID>.
func hubContainer(ctx context.Context, b *testing.B, cs kubernetes.Interface, n realnode.Network, node string) containerCgroup {
	b.Helper()
	pods, err := cs.CoreV1().Pods("open-cluster-management-hub").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=flotilla-hub"})
	if err != nil {
		b.Fatal(err)
	}
	if len(pods.Items) != 1 || pods.Items[0].Spec.NodeName != node || len(pods.Items[0].Status.ContainerStatuses) != 1 {
		b.Fatalf("want the hub's one pod running on %s, have %d pods", node, len(pods.Items))
	}
	p := pods.Items[0]
	id := strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, "containerd://")
	var c containerCgroup
	res := p.Spec.Containers[0].Resources
	c.request, c.limit = res.Requests.Memory().Value(), res.Limits.Memory().Value()
	for _, h := range []string{"memory", "cpuacct"} {
		var found string
		for _, qos := range []string{"", "burstable", "besteffort"} {
			d := filepath.Join("/sys/fs/cgroup", h, n.CgroupName(), "kubepods", qos, "pod"+string(p.UID), id)
			if _, err := os.Stat(d); err == nil {
				found = d
			}
		}
		if found == "" {
			b.Fatalf("no %s cgroup for container %s of pod %s (QoS %s) under %s", h, id, p.Name, p.Status.QOSClass, n.CgroupName())
		}
		if h == "memory" {
			c.memory = found
		} else {
			c.cpuacct = found
		}
	}
	return c
}

// workingSet is the container's memory as the kubelet counts it against its limit: usage less
// inactive file pages.
func (c containerCgroup) workingSet(b *testing.B) int64 { return workingSet(b, c.memory) }

// pid is the container's process (the hub runs as the container's only process).
func (c containerCgroup) pid(b *testing.B) int {
	data, err := os.ReadFile(filepath.Join(c.memory, "cgroup.procs"))
	if err != nil {
		b.Fatal(err)
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
	pid, err := strconv.Atoi(first)
	if err != nil {
		b.Fatalf("the hub container's cgroup %s has no process (%q)", c.memory, data)
	}
	return pid
}

func (c containerCgroup) peak(b *testing.B) int64 {
	return cgroupInt(b, filepath.Join(c.memory, "memory.max_usage_in_bytes"))
}

// cpuPercent is the container's CPU over d, as a share of one core.
func (c containerCgroup) cpuPercent(b *testing.B, d time.Duration) float64 {
	f := filepath.Join(c.cpuacct, "cpuacct.usage")
	u0, t0 := cgroupInt(b, f), time.Now()
	time.Sleep(d)
	return float64(cgroupInt(b, f)-u0) / float64(time.Since(t0).Nanoseconds()) * 100
}

// nodeOverhead is what a real node's own programs hold: the working set of its cgroup less its
// pods' (kubepods).
func nodeOverhead(b *testing.B, n realnode.Network) int64 {
	root := filepath.Join("/sys/fs/cgroup/memory", n.CgroupName())
	return workingSet(b, root) - workingSet(b, filepath.Join(root, "kubepods"))
}

func workingSet(b *testing.B, dir string) int64 {
	usage := cgroupInt(b, filepath.Join(dir, "memory.usage_in_bytes"))
	f, err := os.Open(filepath.Join(dir, "memory.stat"))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), " "); ok && k == "total_inactive_file" {
			n, _ := strconv.ParseInt(v, 10, 64)
			return max(usage-n, 0)
		}
	}
	return usage
}

func cgroupInt(b *testing.B, file string) int64 {
	data, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		b.Fatalf("%s: %v", file, err)
	}
	return n
}
