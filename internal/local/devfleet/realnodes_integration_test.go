//go:build integration

package devfleet

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/local/fleet"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/realnode"
)

// TestUpRealNodes is `flotilla dev up --real-nodes` on a hub and one spoke: each cluster has a
// real node, Ready beside the spoke's simulated ones, whose CoreDNS answers for the cluster, and
// `flotilla dev down` leaves no process, mount, cgroup, network namespace, link or route of them
// behind.
func TestUpRealNodes(t *testing.T) {
	bins, err := localk8s.FindBinaries()
	if err != nil {
		t.Fatal(err)
	}
	coreDNS, err := realnode.FindCoreDNS()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	spec := &fleet.Fleet{Clusters: []fleet.Cluster{{Name: "edge", NodePools: []fleet.NodePool{{Name: "cpu", Count: 2}}}}}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	st, err := Up(ctx, UpOptions{StateDir: dir, Fleet: spec, FleetSource: "test", Binaries: bins, RealNodes: true, CoreDNS: coreDNS, Out: io.Discard, Clock: clock.RealClock{}})
	var recorded []RealNodeState
	if st != nil {
		for _, c := range st.Clusters {
			if c.RealNode != nil {
				recorded = append(recorded, *c.RealNode)
			}
		}
	}
	t.Cleanup(func() {
		_ = Down(dir, io.Discard)
		for _, n := range recorded {
			_ = realnode.Teardown(realnode.Network{Index: n.Index}, n.Dir)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(recorded) != 2 {
		t.Fatalf("state records real nodes %+v, want one for the hub and one for edge", recorded)
	}
	for _, c := range st.Clusters {
		cfg, err := localk8s.RESTConfigFromKubeconfig(c.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: RealNodeLabel + "=true"})
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes.Items) != 1 || nodes.Items[0].Name != c.RealNode.Node || !ready(&nodes.Items[0]) {
			t.Errorf("cluster %s: real nodes %v, want %s Ready", c.Name, names(nodes.Items), c.RealNode.Node)
		}
		if !strings.Contains(c.Server, realnode.Network{Index: c.RealNode.Index}.HostIP()) {
			t.Errorf("cluster %s serves at %s, want its node's host address %s", c.Name, c.Server, realnode.Network{Index: c.RealNode.Index}.HostIP())
		}
		// The node's CoreDNS, detached like the node's other processes, answers for its cluster.
		dns := net.JoinHostPort(realnode.Network{Index: c.RealNode.Index}.NodeIP(), "53")
		if addrs, err := realnode.Resolver(dns).LookupHost(ctx, "kubernetes.default.svc.cluster.local."); err != nil || len(addrs) != 1 || addrs[0] != "10.96.0.1" {
			t.Errorf("cluster %s: its node's CoreDNS at %s resolves the kubernetes Service to %v, %v; want 10.96.0.1", c.Name, dns, addrs, err)
		}
	}

	if err := Down(dir, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, n := range recorded {
		if left := realnode.Leftovers(realnode.Network{Index: n.Index}, n.Dir); len(left) > 0 {
			t.Errorf("after down, node %s left: %s", n.Node, strings.Join(left, "; "))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, StateFile)); err == nil {
		t.Errorf("the state file is still there after down")
	}
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func names(nodes []corev1.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	return out
}
