package devfleet

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/realnode"
)

// RealNodeState is a cluster's real node (flotilla dev up --real-nodes): what `down` needs to
// tear it down after its processes are gone.
type RealNodeState struct {
	// Node is the Node's name.
	Node string `json:"node"`
	// Index is the node's network index on this machine (realnode.Network).
	Index int `json:"index"`
	// Dir is the node's folder.
	Dir string `json:"dir"`
}

// realNodeName is the Node a cluster's real node registers as.
func realNodeName(cluster string) string { return cluster + "-node" }

// allocateRealNodes takes a node network for each cluster, before the clusters start: each API
// server serves at its node's link. On error it releases what it took.
func allocateRealNodes(clusters []string) (map[string]realnode.Network, error) {
	nets := map[string]realnode.Network{}
	for _, c := range clusters {
		n, err := realnode.Allocate()
		if err != nil {
			return nil, errors.Join(fmt.Errorf("cluster %s: real node: %w", c, err), releaseNetworks(nets))
		}
		nets[c] = n
	}
	return nets, nil
}

// releaseNetworks tears down networks whose nodes never started.
func releaseNetworks(nets map[string]realnode.Network) error {
	var errs []error
	for _, n := range nets {
		errs = append(errs, n.Release())
	}
	return errors.Join(errs...)
}

// addresses maps each cluster to its node's host address, where its API server serves.
func addresses(nets map[string]realnode.Network) map[string]string {
	out := map[string]string{}
	for c, n := range nets {
		out[c] = n.HostIP()
	}
	return out
}

// recordRealNodes notes each cluster's node in the state, before the nodes start, so that `down`
// tears down whatever of them exists if what follows fails.
func recordRealNodes(st *State, f *localk8s.Fleet, nets map[string]realnode.Network) {
	for i := range st.Clusters {
		c := &st.Clusters[i]
		n, ok := nets[c.Name]
		if !ok {
			continue
		}
		lc, _ := f.Cluster(c.Name)
		c.RealNode = &RealNodeState{Node: realNodeName(c.Name), Index: n.Index, Dir: filepath.Join(lc.Dir, "node")}
	}
}

// startRealNodes starts every cluster's real node, in parallel, detached, with images imported.
func startRealNodes(ctx context.Context, f *localk8s.Fleet, st *State, opts UpOptions, say func(string, ...any)) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, c := range st.Clusters {
		if c.RealNode == nil {
			continue
		}
		lc, _ := f.Cluster(c.Name)
		wg.Go(func() {
			_, err := realnode.Start(ctx, realnode.Options{
				Name: c.RealNode.Node, Dir: c.RealNode.Dir, Network: realnode.Network{Index: c.RealNode.Index},
				Cluster: lc, Binaries: opts.Binaries, CoreDNS: opts.CoreDNS, Images: opts.Images, Detach: true,
				Labels: map[string]string{RealNodeLabel: "true"},
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("cluster %s: %w", c.Name, err))
				return
			}
			nw := realnode.Network{Index: c.RealNode.Index}
			say("  %-12s real node %s Ready (kubelet %s, containerd, pods on %s, CoreDNS at %s)", c.Name, c.RealNode.Node,
				localk8s.KubernetesVersion, nw.PodCIDR(), nw.NodeIP())
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// RealNodeLabel marks the real nodes of a fleet, beside its kwok nodes.
const RealNodeLabel = "flotilla.io/real-node"

// tearDownRealNodes removes every real node the state records: processes, mounts, cgroups and
// networks (realnode.Teardown).
func tearDownRealNodes(st *State) error {
	var errs []error
	for _, c := range st.Clusters {
		if c.RealNode != nil {
			errs = append(errs, realnode.Teardown(realnode.Network{Index: c.RealNode.Index}, c.RealNode.Dir))
		}
	}
	return errors.Join(errs...)
}
