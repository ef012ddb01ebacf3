package devfleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/install"
	"github.com/flotilla/flotilla/internal/local/fleet"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/realnode"
)

// UpOptions configures Up.
type UpOptions struct {
	// StateDir holds the fleet's state file and its clusters' folders.
	StateDir string
	Fleet    *fleet.Fleet
	// FleetSource names the fleet file in messages and status.
	FleetSource string
	Binaries    localk8s.Binaries
	// Flotilla is the flotilla binary to run the hub and the agents with; empty runs neither, and
	// the spokes stay unregistered.
	Flotilla string
	// Kueue, when set, runs Kueue's manager from this folder (tools/build-kueue.sh) on the hub
	// and every spoke (the fleet file's `with: [kueue]`, or `flotilla dev up --with kueue`).
	Kueue *localk8s.KueueBinaries
	// RealNodes gives the hub and every spoke one real node (internal/local/realnode) beside
	// their simulated ones: `flotilla dev up --real-nodes`, or the fleet file's realNodes.
	RealNodes bool
	// Images are image archives (make image's tarballs) imported into every real node, as `kind
	// load image-archive` does: `flotilla dev up --real-nodes --load-image FILE`.
	Images []string
	// CoreDNS is the CoreDNS binary every real node runs as its cluster's DNS
	// (realnode.FindCoreDNS; tools/build-coredns.sh); required with RealNodes.
	CoreDNS string
	// Out receives progress lines.
	Out   io.Writer
	Clock clock.PassiveClock
}

// AlreadyRunningError says a fleet runs in the state folder already.
type AlreadyRunningError struct {
	Dir       string
	StartedAt time.Time
	Running   int
}

func (e *AlreadyRunningError) Error() string {
	return fmt.Sprintf("a fleet is already running from %s (started %s, %d processes): use it, or stop it first with `flotilla dev down`",
		e.Dir, e.StartedAt.Format(time.RFC3339), e.Running)
}

// Up starts the fleet detached, creates its simulated nodes, waits until they are Ready, and
// records the fleet in the state folder. On error it stops what it started and leaves no state.
// It writes only the state file and the fleet's folder (FleetFolder) in the state folder, which
// may hold other files.
func Up(ctx context.Context, opts UpOptions) (_ *State, err error) {
	say := func(format string, args ...any) { _, _ = fmt.Fprintf(opts.Out, format+"\n", args...) }
	// Absolute paths in the state, so that later commands work from any folder.
	dir, err := filepath.Abs(opts.StateDir)
	if err != nil {
		return nil, err
	}
	if opts.Binaries.Dir, err = filepath.Abs(opts.Binaries.Dir); err != nil {
		return nil, err
	}
	if len(opts.Images) > 0 && !opts.RealNodes {
		return nil, fmt.Errorf("image archives to load (%s) need real nodes: add --real-nodes (or realNodes: true in the fleet file); simulated nodes run no images", strings.Join(opts.Images, ", "))
	}
	if opts.RealNodes {
		if err := realnode.CheckCoreDNS("UpOptions.CoreDNS", opts.CoreDNS); err != nil {
			return nil, err
		}
	}
	for i, img := range opts.Images {
		abs, err := filepath.Abs(img)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, fmt.Errorf("image archive to load: %w (make image writes bin/images/flotilla-linux-amd64.tar)", err)
		}
		opts.Images[i] = abs
	}
	flotilla := opts.Flotilla
	if flotilla != "" {
		if flotilla, err = localk8s.ResolveBinary(flotilla); err != nil {
			return nil, fmt.Errorf("the flotilla binary to run the hub and agents with: %w", err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	unlock, err := lock(dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		unlock()
		if err != nil {
			_ = os.Remove(dir) // only if nothing is left in it
		}
	}()

	if old, err := Load(dir); err == nil {
		if running := old.Running(); len(running) > 0 {
			return nil, &AlreadyRunningError{Dir: dir, StartedAt: old.StartedAt, Running: len(running)}
		}
		say("clearing the state of a fleet that no longer runs (started %s)", old.StartedAt.Format(time.RFC3339))
		if _, err := removeFiles(dir); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, ErrNotRunning) {
		return nil, err
	}
	fleetDir, err := claimFleetFolder(dir)
	if err != nil {
		return nil, err
	}

	start := opts.Clock.Now()
	var spokes []string
	for _, c := range opts.Fleet.Clusters {
		spokes = append(spokes, c.Name)
	}
	say("starting a fleet from %s: hub and %d spokes (binaries in %s)", opts.FleetSource, len(spokes), opts.Binaries.Dir)
	var nets map[string]realnode.Network
	if opts.RealNodes {
		if nets, err = allocateRealNodes(append([]string{localk8s.HubName}, spokes...)); err != nil {
			return nil, err
		}
	}
	f, err := localk8s.StartFleet(ctx, localk8s.FleetOptions{
		Dir: fleetDir, Binaries: opts.Binaries, Spokes: spokes, Detach: true, Progress: opts.Out,
		Addresses: addresses(nets), HubScheduler: opts.RealNodes,
	})
	if err != nil {
		return nil, errors.Join(err, releaseNetworks(nets)) // StartFleet stopped whatever it started
	}
	st := newState(f, opts.Fleet, opts.FleetSource, start)
	recordRealNodes(st, f, nets)
	// Saved before the nodes exist so that `down` finds the processes even if what follows fails.
	if err := st.save(dir); err != nil {
		f.Stop()
		return nil, err
	}
	if err := installCRDs(ctx, f, say); err != nil {
		f.Stop()
		_ = tearDownRealNodes(st)
		_, _ = removeFiles(dir)
		return nil, err
	}
	if err := addNodes(ctx, f, opts.Fleet, say); err != nil {
		f.Stop()
		_ = tearDownRealNodes(st)
		_, _ = removeFiles(dir)
		return nil, err
	}
	if opts.RealNodes {
		if err := startRealNodes(ctx, f, st, opts, say); err != nil {
			_ = Down(dir, io.Discard)
			return nil, err
		}
	}
	if opts.Kueue != nil {
		err := startKueue(ctx, f, *opts.Kueue, opts.Flotilla, st, say)
		if serr := st.save(dir); serr != nil && err == nil {
			err = serr
		}
		if err != nil {
			_ = Down(dir, io.Discard)
			return nil, err
		}
	}
	if flotilla != "" {
		err := startFlotilla(ctx, f, flotilla, st, opts.Clock, opts.Kueue != nil, say)
		if serr := st.save(dir); serr != nil && err == nil {
			err = serr
		}
		if err != nil {
			_ = Down(dir, io.Discard)
			return nil, err
		}
	}
	say("fleet ready in %.1fs", opts.Clock.Since(start).Seconds())
	return st, nil
}

// installCRDs puts the OCM and Flotilla CRDs on every cluster: the hub serves them all, and spokes
// hold the spoke-side kinds (ClusterClaim, AppliedManifestWork).
func installCRDs(ctx context.Context, f *localk8s.Fleet, say func(string, ...any)) error {
	n := 0
	for _, c := range f.Clusters() {
		results, err := install.Embedded(ctx, c.Config, install.Options{})
		if err != nil {
			return fmt.Errorf("cluster %s: %w", c.Name, err)
		}
		n = len(results)
	}
	if err := install.AgentRoles(ctx, f.Hub.Config); err != nil {
		return err
	}
	say("  %d CRDs installed on every cluster", n)
	return nil
}

func addNodes(ctx context.Context, f *localk8s.Fleet, spec *fleet.Fleet, say func(string, ...any)) error {
	clients := map[string]kubernetes.Interface{}
	for _, c := range spec.Clusters {
		lc, _ := f.Cluster(c.Name)
		cs, err := kubernetes.NewForConfig(lc.Config)
		if err != nil {
			return err
		}
		clients[c.Name] = cs
		want := 0
		for _, np := range c.NodePools {
			if err := localk8s.CreateNodes(ctx, cs, np.LocalNodePool()); err != nil {
				return fmt.Errorf("cluster %s: %w", c.Name, err)
			}
			want += np.Count
		}
		say("  %-12s %d simulated nodes created", c.Name, want)
	}
	for _, c := range spec.Clusters {
		lc, _ := f.Cluster(c.Name)
		if err := localk8s.WaitNodesSchedulable(ctx, clients[c.Name], 2*time.Minute); err != nil {
			if cerr := lc.Check(); cerr != nil {
				return fmt.Errorf("cluster %s: nodes did not become Ready: %w", c.Name, cerr)
			}
			return fmt.Errorf("cluster %s: %w; see the logs in %s", c.Name, err, filepath.Join(lc.Dir, "logs"))
		}
		say("  %-12s nodes Ready", c.Name)
	}
	return nil
}

// lock makes sure only one `up` works on a state folder at a time.
func lock(dir string) (unlock func(), err error) {
	path := filepath.Join(dir, "up.lock")
	self, _ := os.Executable()
	for range 2 {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			_, _ = fmt.Fprintf(f, "%d %s\n", os.Getpid(), self)
			_ = f.Close()
			return func() { _ = os.Remove(path) }, nil
		}
		data, rerr := os.ReadFile(path)
		if rerr != nil {
			return nil, rerr
		}
		var pid int
		var exe string
		_, _ = fmt.Sscanf(string(data), "%d %s", &pid, &exe)
		if localk8s.Running(pid, exe) {
			return nil, fmt.Errorf("another `flotilla dev up` (pid %d) is starting a fleet in %s; wait for it, or stop it", pid, dir)
		}
		_ = os.Remove(path) // left by an up that died
	}
	return nil, fmt.Errorf("cannot lock %s", path)
}
