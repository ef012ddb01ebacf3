package localk8s

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"
)

// HubName is the name of the hub cluster in every fleet.
const HubName = "hub"

// FleetOptions configures StartFleet.
type FleetOptions struct {
	// Dir holds the fleet: etcd/ and one folder per cluster.
	Dir      string
	Binaries Binaries
	// Spokes names the spoke clusters; each gets a scheduler and kwok.
	Spokes []string
	// EtcdPerCluster gives each cluster its own etcd instead of one shared etcd with a prefix
	// per cluster. Benchmarks compare the two; the shared etcd is the default.
	EtcdPerCluster bool
	// HubScheduler runs kube-scheduler on the hub too (ClusterOptions.Scheduler), for a hub with
	// process-runtime nodes; without it the hub has no scheduler.
	HubScheduler bool
	Detach       bool
	// Addresses maps a cluster's name to the address its API server serves at
	// (ClusterOptions.Address); 127.0.0.1 for a cluster it does not name.
	Addresses map[string]string
	// Progress, when set, receives a line per step.
	Progress io.Writer
}

// Fleet is a hub and its spokes, running.
type Fleet struct {
	Etcds  []*Etcd
	Hub    *Cluster
	Spokes []*Cluster
}

// StartFleet starts etcd, the hub and the spokes, the clusters in parallel. On error it stops
// whatever it started.
func StartFleet(ctx context.Context, opts FleetOptions) (_ *Fleet, err error) {
	if err := opts.Binaries.Check(); err != nil {
		return nil, err
	}
	progress := func(format string, args ...any) {
		if opts.Progress != nil {
			_, _ = fmt.Fprintf(opts.Progress, format+"\n", args...)
		}
	}
	start := time.Now()
	f := &Fleet{}
	defer func() {
		if err != nil {
			f.Stop()
		}
	}()
	names := append([]string{HubName}, opts.Spokes...)
	etcdFor := map[string]*Etcd{}
	if !opts.EtcdPerCluster {
		progress("starting etcd")
		e, err := StartEtcd(ctx, EtcdOptions{Name: "etcd", Dir: filepath.Join(opts.Dir, "etcd"), Binaries: opts.Binaries, Detach: opts.Detach})
		if err != nil {
			return nil, err
		}
		f.Etcds = append(f.Etcds, e)
		for _, n := range names {
			etcdFor[n] = e
		}
	}

	clusters := make([]*Cluster, len(names))
	errs := make([]error, len(names))
	var mu sync.Mutex
	var wg sync.WaitGroup
	progress("starting %d clusters: %v", len(names), names)
	for i, name := range names {
		wg.Go(func() {
			e := etcdFor[name]
			if e == nil {
				e, errs[i] = StartEtcd(ctx, EtcdOptions{
					Name: name + "/etcd", Dir: filepath.Join(opts.Dir, name, "etcd"), Binaries: opts.Binaries, Detach: opts.Detach,
				})
				if errs[i] != nil {
					return
				}
				mu.Lock()
				f.Etcds = append(f.Etcds, e)
				mu.Unlock()
			}
			clusters[i], errs[i] = StartCluster(ctx, ClusterOptions{
				Name:      name,
				Dir:       filepath.Join(opts.Dir, name),
				Binaries:  opts.Binaries,
				EtcdURL:   e.URL,
				Workloads: name != HubName,
				Scheduler: name == HubName && opts.HubScheduler,
				Address:   opts.Addresses[name],
				Detach:    opts.Detach,
			})
			if errs[i] == nil {
				clusters[i].Etcd = e
				progress("  %-12s API server ready at %s (%.1fs)", name, clusters[i].Server, time.Since(start).Seconds())
			}
		})
	}
	wg.Wait()
	for i, c := range clusters {
		if c == nil {
			continue
		}
		if i == 0 {
			f.Hub = c
		} else {
			f.Spokes = append(f.Spokes, c)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return f, nil
}

// Clusters lists the hub and then the spokes.
func (f *Fleet) Clusters() []*Cluster {
	var out []*Cluster
	if f.Hub != nil {
		out = append(out, f.Hub)
	}
	return append(out, f.Spokes...)
}

// Cluster finds a cluster by name.
func (f *Fleet) Cluster(name string) (*Cluster, bool) {
	for _, c := range f.Clusters() {
		if c.Name == name {
			return c, true
		}
	}
	return nil, false
}

// Processes lists every process of the fleet.
func (f *Fleet) Processes() []*Process {
	var out []*Process
	for _, c := range f.Clusters() {
		out = append(out, c.Processes()...)
	}
	for _, e := range f.Etcds {
		out = append(out, e.Process)
	}
	return out
}

// Check reports every process of the fleet that has exited.
func (f *Fleet) Check() error {
	var errs []error
	for _, c := range f.Clusters() {
		errs = append(errs, c.Check())
	}
	for _, e := range f.Etcds {
		errs = append(errs, e.Process.ExitError())
	}
	return errors.Join(errs...)
}

// Stop stops the clusters in parallel, then etcd.
func (f *Fleet) Stop() {
	var wg sync.WaitGroup
	for _, c := range f.Clusters() {
		wg.Go(c.Stop)
	}
	wg.Wait()
	for _, e := range f.Etcds {
		e.Stop()
	}
}
