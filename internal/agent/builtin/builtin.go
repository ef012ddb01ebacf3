package builtin

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/agent/registration"
)

// AddOn is one built-in add-on.
type AddOn interface {
	// Name is the add-on's name: its ClusterManagementAddOn's and ManagedClusterAddOns'.
	Name() string
	// Run does the add-on's work until ctx ends. An error ends the run; the manager reports it
	// and runs the add-on again after a backoff.
	Run(ctx context.Context, env Env) error
	// Cleanup removes what the add-on wrote, once it is switched off on the cluster.
	Cleanup(ctx context.Context, env Env) error
}

// Env is what a built-in add-on works with.
type Env struct {
	ClusterName string
	// Hub acts with the agent's hub identity; HubKube is the same identity's clientset, for
	// watches.
	Hub     client.Client
	HubKube kubernetes.Interface
	// HubConfig is the same identity's configuration, for watches of Flotilla's and OCM's kinds.
	HubConfig *rest.Config
	Spoke     *rest.Config
	Clock     clock.WithTicker
	Log       logr.Logger
	// Annotations are the ManagedClusterAddOn's when the run started: how the hub passes a
	// built-in add-on its settings.
	Annotations map[string]string
}

// OrDefault is d, or def when d is not positive: the add-ons' timings, zero for their defaults.
func OrDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// RestartBackoff is the wait before an add-on whose run failed runs again.
const RestartBackoff = 10 * time.Second

// Manager runs the built-in add-ons their ManagedClusterAddOns switch on.
type Manager struct {
	clusterName string
	spoke       *rest.Config
	clock       clock.WithTicker
	log         logr.Logger
	addOns      map[string]AddOn

	mu      sync.Mutex
	running map[string]*run
	// ended is set whenever a run ends by itself: its health is then to report.
	ended registration.Shared[struct{}]
}

// run is one run of an add-on.
type run struct {
	hub    *registration.HubClients
	cancel context.CancelFunc
	done   chan struct{}
	// err and ended are set when the run ends by itself.
	err   error
	ended time.Time
}

func (r *run) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// NewManager returns a manager of addOns for the cluster.
func NewManager(clusterName string, spoke *rest.Config, clk clock.WithTicker, log logr.Logger, addOns ...AddOn) *Manager {
	m := &Manager{clusterName: clusterName, spoke: spoke, clock: clk, log: log, addOns: map[string]AddOn{}, running: map[string]*run{}}
	for _, a := range addOns {
		m.addOns[a.Name()] = a
	}
	return m
}

// Ended returns a channel that closes when a run next ends by itself (Sync then reports it).
func (m *Manager) Ended() <-chan struct{} { return m.ended.Changed() }

// Has reports whether name is one of the manager's add-ons.
func (m *Manager) Has(name string) bool {
	_, ok := m.addOns[name]
	return ok
}

// Sync makes the running add-ons those of mcas (the cluster's ManagedClusterAddOns) and reports
// their health. It returns how soon it wants to be called again (an add-on waiting to restart).
// Runs outlive the call: they end with Stop, or when ctx given to Start ends.
func (m *Manager) Sync(ctx context.Context, hub *registration.HubClients, mcas []addonv1alpha1.ManagedClusterAddOn) (time.Duration, error) {
	if hub == nil {
		return 0, nil
	}
	want := map[string]*addonv1alpha1.ManagedClusterAddOn{}
	for i := range mcas {
		a := &mcas[i]
		if _, ok := m.addOns[a.Name]; ok && a.DeletionTimestamp.IsZero() {
			want[a.Name] = a
		}
	}
	var errs []error
	running := m.snapshot()
	for name := range running {
		if want[name] == nil {
			m.stop(name)
			if err := m.addOns[name].Cleanup(ctx, m.env(hub, name)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	var next time.Duration
	now := m.clock.Now()
	for name, mca := range want {
		r := running[name]
		switch {
		case r == nil, r.hub != hub && !r.exited():
			m.stop(name)
			m.start(name, hub, mca.Annotations)
		case r.exited():
			if wait := r.ended.Add(RestartBackoff).Sub(now); wait > 0 {
				if next == 0 || wait < next {
					next = wait
				}
			} else {
				m.start(name, hub, mca.Annotations)
			}
		}
		if err := m.report(ctx, hub.Client, mca, m.snapshot()[name]); err != nil {
			errs = append(errs, err)
		}
	}
	return next, errors.Join(errs...)
}

// Stop stops every add-on (without cleaning up: the agent stops, the add-ons stay switched on).
func (m *Manager) Stop() {
	for name := range m.snapshot() {
		m.stop(name)
	}
}

func (m *Manager) snapshot() map[string]*run {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]*run, len(m.running))
	for k, v := range m.running {
		out[k] = v
	}
	return out
}

func (m *Manager) env(hub *registration.HubClients, name string) Env {
	return Env{ClusterName: m.clusterName, Hub: hub.Client, HubKube: hub.Kube, HubConfig: hub.Config, Spoke: m.spoke, Clock: m.clock, Log: m.log.WithValues("addon", name)}
}

func (m *Manager) start(name string, hub *registration.HubClients, annotations map[string]string) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &run{hub: hub, cancel: cancel, done: make(chan struct{})}
	m.mu.Lock()
	m.running[name] = r
	m.mu.Unlock()
	env := m.env(hub, name)
	env.Annotations = maps.Clone(annotations)
	env.Log.Info("starting the built-in add-on")
	go func() {
		err := m.addOns[name].Run(ctx, env)
		if ctx.Err() == nil {
			if err == nil {
				err = errors.New("the add-on stopped by itself")
			}
			env.Log.Error(err, "the built-in add-on stopped; starting it again", "after", RestartBackoff)
		}
		m.mu.Lock()
		r.err, r.ended = err, m.clock.Now()
		m.mu.Unlock()
		close(r.done)
		if ctx.Err() == nil {
			m.ended.Set(struct{}{})
		}
	}()
}

func (m *Manager) stop(name string) {
	m.mu.Lock()
	r := m.running[name]
	delete(m.running, name)
	m.mu.Unlock()
	if r != nil {
		r.cancel()
		<-r.done
	}
}
