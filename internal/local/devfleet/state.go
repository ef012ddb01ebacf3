package devfleet

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/flotilla/flotilla/internal/local/fleet"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// StateFile is the name of the state file in the state folder.
const StateFile = "fleet.json"

// State is what a running fleet leaves behind for later commands.
type State struct {
	StartedAt time.Time `json:"startedAt"`
	// FleetSource names the fleet file, or "default fleet".
	FleetSource string         `json:"fleetSource"`
	Clusters    []ClusterState `json:"clusters"`
	Processes   []ProcessState `json:"processes"`
}

// ClusterState is one cluster of a running fleet.
type ClusterState struct {
	Name       string            `json:"name"`
	Role       string            `json:"role"` // "hub" or "spoke"
	Server     string            `json:"server"`
	Kubeconfig string            `json:"kubeconfig"`
	Labels     map[string]string `json:"labels,omitempty"`
	Claims     map[string]string `json:"claims,omitempty"`
	NodePools  []fleet.NodePool  `json:"nodePools,omitempty"`
	// RealNode is the cluster's real node, with --real-nodes.
	RealNode *RealNodeState `json:"realNode,omitempty"`
}

// ProcessState is one process of a running fleet.
type ProcessState struct {
	// Cluster is empty for a shared etcd.
	Cluster   string `json:"cluster,omitempty"`
	Component string `json:"component"`
	PID       int    `json:"pid"`
	// Binary is the absolute path of the process's executable with symbolic links resolved, as
	// /proc/PID/exe shows it, so that later commands recognize the process from any folder.
	Binary string `json:"binary"`
	Log    string `json:"log"`
}

// Roles of clusters.
const (
	RoleHub   = "hub"
	RoleSpoke = "spoke"
)

// ErrNotRunning says the state folder holds no fleet.
var ErrNotRunning = errors.New("no fleet is running")

// Load reads the state of the fleet in dir.
func Load(dir string) (*State, error) {
	data, err := os.ReadFile(filepath.Join(dir, StateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w (no %s in %s); start one with `flotilla dev up`", ErrNotRunning, StateFile, dir)
	}
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("the fleet state %s is damaged (%v): stop the fleet's processes by hand (their logs are under %s) and remove the file",
			filepath.Join(dir, StateFile), err, filepath.Join(dir, FleetFolder))
	}
	return &st, nil
}

func (st *State) save(dir string) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, StateFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, StateFile))
}

// Cluster finds a cluster by name.
func (st *State) Cluster(name string) (ClusterState, error) {
	var names []string
	for _, c := range st.Clusters {
		if c.Name == name {
			return c, nil
		}
		names = append(names, c.Name)
	}
	return ClusterState{}, fmt.Errorf("the running fleet has no cluster %q; it has %v", name, names)
}

// Running lists the fleet's processes that still run.
func (st *State) Running() []ProcessState {
	var out []ProcessState
	for _, p := range st.Processes {
		if localk8s.Running(p.PID, p.Binary) {
			out = append(out, p)
		}
	}
	return out
}

func newState(f *localk8s.Fleet, spec *fleet.Fleet, source string, now time.Time) *State {
	st := &State{StartedAt: now, FleetSource: source}
	specs := map[string]fleet.Cluster{}
	for _, c := range spec.Clusters {
		specs[c.Name] = c
	}
	for _, c := range f.Clusters() {
		cs := ClusterState{Name: c.Name, Role: RoleSpoke, Server: c.Server, Kubeconfig: c.Kubeconfig}
		if c.Name == localk8s.HubName {
			cs.Role = RoleHub
		}
		s := specs[c.Name]
		cs.Labels, cs.Claims, cs.NodePools = s.Labels, s.Claims, s.NodePools
		st.Clusters = append(st.Clusters, cs)
		for _, p := range c.Processes() {
			st.Processes = append(st.Processes, processState(c.Name, p))
		}
	}
	for _, e := range f.Etcds {
		st.Processes = append(st.Processes, processState("", e.Process))
	}
	return st
}

func processState(cluster string, p *localk8s.Process) ProcessState {
	return ProcessState{Cluster: cluster, Component: filepath.Base(p.Binary()), PID: p.PID(), Binary: recordedBinary(p.Binary()), Log: p.LogPath}
}
