package devfleet

import (
	"context"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// Report is the health of a running fleet.
type Report struct {
	StartedAt   time.Time       `json:"startedAt"`
	FleetSource string          `json:"fleetSource"`
	Healthy     bool            `json:"healthy"`
	Clusters    []ClusterReport `json:"clusters"`
}

// ClusterReport is the health of one cluster.
type ClusterReport struct {
	Name       string `json:"name"`
	Role       string `json:"role"`
	Server     string `json:"server"`
	Kubeconfig string `json:"kubeconfig"`
	// APIReady is true when the API server answers /readyz; APIError says why not.
	APIReady   bool            `json:"apiReady"`
	APIError   string          `json:"apiError,omitempty"`
	Processes  []ProcessReport `json:"processes"`
	Nodes      int             `json:"nodes"`
	NodesReady int             `json:"nodesReady"`
	// GPUs is the allocatable nvidia.com/gpu of Ready nodes by GPU model.
	GPUs    map[string]int64 `json:"gpus,omitempty"`
	Healthy bool             `json:"healthy"`
}

// ProcessReport is one process of a cluster.
type ProcessReport struct {
	Component string `json:"component"`
	PID       int    `json:"pid"`
	Running   bool   `json:"running"`
	Log       string `json:"log"`
}

// Status checks every cluster of the fleet: processes, API server readiness, nodes and GPUs.
func Status(ctx context.Context, st *State) Report {
	r := Report{StartedAt: st.StartedAt, FleetSource: st.FleetSource, Healthy: true}
	for _, c := range st.Clusters {
		cr := ClusterReport{Name: c.Name, Role: c.Role, Server: c.Server, Kubeconfig: c.Kubeconfig}
		allRunning := true
		for _, p := range st.Processes {
			if p.Cluster != c.Name {
				continue
			}
			running := localk8s.Running(p.PID, p.Binary)
			allRunning = allRunning && running
			cr.Processes = append(cr.Processes, ProcessReport{Component: p.Component, PID: p.PID, Running: running, Log: p.Log})
		}
		checkAPI(ctx, c, &cr)
		wantNodes := 0
		for _, np := range c.NodePools {
			wantNodes += np.Count
		}
		cr.Healthy = allRunning && cr.APIReady && cr.NodesReady == wantNodes && cr.Nodes == wantNodes
		r.Healthy = r.Healthy && cr.Healthy
		r.Clusters = append(r.Clusters, cr)
	}
	for _, p := range st.Processes {
		if p.Cluster == "" && !localk8s.Running(p.PID, p.Binary) {
			r.Healthy = false // the shared etcd
		}
	}
	return r
}

func checkAPI(ctx context.Context, c ClusterState, cr *ClusterReport) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cfg, err := localk8s.RESTConfigFromKubeconfig(c.Kubeconfig)
	if err != nil {
		cr.APIError = err.Error()
		return
	}
	cfg.Timeout = 5 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		cr.APIError = err.Error()
		return
	}
	if _, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err != nil {
		cr.APIError = err.Error()
		return
	}
	cr.APIReady = true
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		cr.APIError = "listing nodes: " + err.Error()
		return
	}
	cr.Nodes = len(nodes.Items)
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if !localk8s.NodeSchedulable(n) {
			continue
		}
		cr.NodesReady++
		if q, ok := n.Status.Allocatable[localk8s.GPUResource]; ok && q.Value() > 0 {
			if cr.GPUs == nil {
				cr.GPUs = map[string]int64{}
			}
			cr.GPUs[n.Labels[localk8s.GPUProductLabel]] += q.Value()
		}
	}
}

// GPUModels returns the report's GPU models in a stable order.
func (cr ClusterReport) GPUModels() []string {
	var out []string
	for m := range cr.GPUs {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}
