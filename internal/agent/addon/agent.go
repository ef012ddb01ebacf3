package addon

import (
	"context"
	"errors"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/agent/loop"
	"github.com/flotilla/flotilla/internal/agent/registration"
)

// Hub gives the registration agent's current hub credentials (registration.HubAccess).
type Hub = registration.Credentials

var _ Hub = (*registration.HubAccess)(nil)

// Options configures the add-on agent.
type Options struct {
	// ClusterName is the cluster's name, and its namespace on the hub.
	ClusterName string
	// AgentID names the agent in the default user of an add-on's certificate.
	AgentID string
	// Hub is the registration agent's hub credentials; the add-on agent follows their renewals.
	Hub Hub
	// Spoke reaches the managed cluster, where the add-ons' Secrets and Leases are. Its identity
	// reads Leases and writes Secrets in the add-ons' install namespaces.
	Spoke *rest.Config
	// QPS and Burst limit the requests of the agent's watch of the cluster's ManagedClusterAddOns
	// on the hub; registration.DefaultQPS and registration.DefaultBurst when zero.
	QPS   float32
	Burst int
	// CertificateLifetime asks the signer for this lifetime; zero takes the signer's default.
	CertificateLifetime time.Duration
	// ApprovalTimeout bounds the wait for an add-on's certificate (DefaultApprovalTimeout when
	// zero); the agent then files a new request.
	ApprovalTimeout time.Duration
	// Resync is how often every registration's Secret is looked at again without a change on the
	// hub (DefaultResync when zero); a certificate is renewed at its time whatever Resync is.
	Resync time.Duration
	// Poll is how often a pending certificate request is looked at; 1 s when zero.
	Poll time.Duration
	// LeaseDurationSeconds is an add-on Lease's duration: it is stale LeaseWindowFactor times
	// this after its last renewal (DefaultLeaseDurationSeconds when zero).
	LeaseDurationSeconds int32
	// HealthSyncInterval is how often the add-ons' Leases are read (DefaultHealthSyncInterval
	// when zero); a Lease is also read again at the moment it turns stale.
	HealthSyncInterval time.Duration
	// InitialBackoff and MaxBackoff bound the wait before a loop tries again after a failure;
	// registration's defaults when zero.
	InitialBackoff, MaxBackoff time.Duration
	// DisableDefaultAddOnNamespace: do not create DefaultInstallNamespace on the spoke (OCM's
	// klusterlet option --disable-default-addon-namespace). By default the agent creates it, as
	// OCM's klusterlet does, since OCM's add-ons install their agents there without creating it.
	DisableDefaultAddOnNamespace bool
	// BuiltIns runs Flotilla's built-in add-ons that the cluster's ManagedClusterAddOns switch
	// on; nil runs none.
	BuiltIns *builtin.Manager
	Clock    clock.WithTicker
	Log      logr.Logger
}

// Defaults, as OCM's agent has them.
const (
	DefaultResync               = 5 * time.Minute
	DefaultApprovalTimeout      = 10 * time.Minute
	DefaultLeaseDurationSeconds = 60
	DefaultHealthSyncInterval   = 30 * time.Second
	// LeaseWindowFactor: an add-on Lease not renewed for this many lease durations is stale.
	LeaseWindowFactor = 5
)

// requestTimeout bounds one request to a server.
const requestTimeout = 30 * time.Second

// Agent gives the cluster's add-ons their hub credentials and reports their health.
type Agent struct {
	opts  Options
	spoke kubernetes.Interface
	// view is the ManagedClusterAddOns of the cluster's namespace, watched with the current
	// credentials; nil until the watch has synced.
	view registration.Shared[*view]
	// changed is set at every change of a ManagedClusterAddOn.
	changed registration.Shared[struct{}]
	// namespaces is the spoke's namespaces, watched; nsWatching is set once the watch runs.
	namespaces spokeNamespaces
	nsWatching bool
}

// New checks the options and returns an add-on agent.
func New(opts Options) (*Agent, error) {
	if opts.ClusterName == "" || opts.AgentID == "" || opts.Hub == nil || opts.Spoke == nil {
		return nil, errors.New("the add-on agent needs a cluster name, an agent id, the registration agent's hub credentials and a spoke kubeconfig")
	}
	if opts.QPS <= 0 {
		opts.QPS = registration.DefaultQPS
	}
	if opts.Burst <= 0 {
		opts.Burst = registration.DefaultBurst
	}
	if opts.ApprovalTimeout <= 0 {
		opts.ApprovalTimeout = DefaultApprovalTimeout
	}
	if opts.Resync <= 0 {
		opts.Resync = DefaultResync
	}
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.LeaseDurationSeconds <= 0 {
		opts.LeaseDurationSeconds = DefaultLeaseDurationSeconds
	}
	if opts.HealthSyncInterval <= 0 {
		opts.HealthSyncInterval = DefaultHealthSyncInterval
	}
	if opts.InitialBackoff <= 0 {
		opts.InitialBackoff = registration.DefaultInitialBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = registration.DefaultMaxBackoff
	}
	opts.MaxBackoff = max(opts.MaxBackoff, opts.InitialBackoff)
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	spoke, err := kubernetes.NewForConfig(opts.Spoke)
	if err != nil {
		return nil, err
	}
	return &Agent{opts: opts, spoke: spoke}, nil
}

// leaseWindow is how long after its last renewal an add-on Lease is stale.
func (a *Agent) leaseWindow() time.Duration {
	return LeaseWindowFactor * time.Duration(a.opts.LeaseDurationSeconds) * time.Second
}

// Loops are the agent's controllers:
//
//   - addons: watches the ManagedClusterAddOns of the cluster's namespace on the hub with the
//     current credentials, and watches again with new ones.
//   - credentials: for every status.registrations entry, requests a certificate, stores it in
//     the add-on's Secret on the spoke and renews it at 80% of its lifetime.
//   - health: for add-ons whose health check is Lease, sets Available from the add-on's Lease.
//   - builtin-addons: runs the built-in add-ons whose ManagedClusterAddOn exists (BuiltIns).
//   - spoke-namespaces: watches the spoke's namespaces; credentials waiting for a namespace are
//     stored the moment it is created.
//   - addon-namespace: creates DefaultInstallNamespace on the spoke, and again if it is deleted
//     (unless DisableDefaultAddOnNamespace).
//
// Each call returns new loops: run them once.
func (a *Agent) Loops() []loop.Loop {
	w, c := &watchLoop{a: a}, &credentialsLoop{a: a, states: map[regKey]*regState{}}
	changes := []func() <-chan struct{}{a.view.Changed, a.changed.Changed}
	capped := func() time.Duration { return a.opts.Resync }
	nsReady := []func() <-chan struct{}{a.namespaces.ready.Changed}
	return []loop.Loop{
		{Name: "spoke-namespaces", Step: a.watchNamespacesStep},
		{Name: "addon-namespace", Step: a.defaultNamespaceStep, Wake: nsReady},
		{Name: "addons", Step: w.step, Wake: []func() <-chan struct{}{a.opts.Hub.Changed}},
		{Name: "addon-credentials", Step: c.step, Wake: append(changes, nsReady...), MaxBackoff: capped},
		{Name: "addon-health", Step: a.healthStep, Wake: changes, MaxBackoff: func() time.Duration { return a.opts.HealthSyncInterval }},
		{Name: "builtin-addons", Step: a.builtInStep, Wake: a.builtInWake(changes), MaxBackoff: func() time.Duration { return builtin.RestartBackoff }},
	}
}

// Run runs the loops until ctx ends, and only then returns, with ctx's error.
func (a *Agent) Run(ctx context.Context) error {
	r := loop.Runner{
		Clock: a.opts.Clock, Log: a.opts.Log, InitialBackoff: a.opts.InitialBackoff, MaxBackoff: a.opts.MaxBackoff,
		Values: []any{"cluster", a.opts.ClusterName},
	}
	if a.opts.BuiltIns != nil {
		defer a.opts.BuiltIns.Stop()
	}
	return r.Run(ctx, a.Loops()...)
}
