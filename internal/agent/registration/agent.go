package registration

import (
	"context"
	"errors"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/agent/loop"
	"github.com/flotilla/flotilla/internal/kubeconfig"
)

// Options configures an Agent.
type Options struct {
	ClusterName string
	// AgentID tells this agent's certificates from other agents' of the same cluster.
	AgentID string
	// Bootstrap reaches the hub with the bootstrap identity, which may only register.
	Bootstrap *rest.Config
	// Spoke reaches the managed cluster.
	Spoke *rest.Config
	// Namespace and SecretName locate the hub kubeconfig Secret on the spoke.
	Namespace  string
	SecretName string
	// LeaseDurationSeconds goes into the ManagedCluster the agent creates; 60 when zero. The hub
	// owns it afterwards: the agent renews at whatever period the ManagedCluster says.
	LeaseDurationSeconds int32
	// ExternalServerURLs are the addresses at which the hub and its consumers (Kueue's
	// MultiKueue, the ClusterProfiles' access providers) reach this cluster's API server. They go,
	// each with the CA of the Spoke configuration, into spec.managedClusterClientConfigs of the
	// ManagedCluster the agent creates (OCM's klusterlet --spoke-external-server-urls); the hub
	// owns them afterwards. Each must be an absolute https URL (ValidateExternalServerURLs).
	ExternalServerURLs []string
	// CertificateLifetime asks the signer for this lifetime; zero takes the signer's default.
	CertificateLifetime time.Duration
	// ApprovalTimeout bounds the wait for an administrator to approve the first certificate
	// request (DefaultApprovalTimeout when zero); the agent then files a new one.
	ApprovalTimeout time.Duration
	// RenewalApprovalTimeout bounds the wait for the hub to approve a renewal
	// (DefaultRenewalApprovalTimeout when zero); the agent then files a new one after the backoff,
	// while its current certificate keeps it connected.
	RenewalApprovalTimeout time.Duration
	// Poll is how often the agent checks on a pending request or acceptance; 1 s when zero.
	Poll time.Duration
	// InitialBackoff and MaxBackoff bound the wait before a loop tries again after a failed step
	// (registration, renewal, lease, status, ...): it starts at InitialBackoff (1 s when zero),
	// doubles with each failure up to MaxBackoff (5 minutes when zero), and adds up to 10%
	// jitter. The lease loop retries at least once a lease period.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	Clock          clock.WithTicker
	Log            logr.Logger
}

// Defaults for the Secret's location, as OCM's agent uses them.
const (
	DefaultNamespace  = "open-cluster-management-agent"
	DefaultSecretName = "hub-kubeconfig-secret"
)

// Default backoff after a failure.
const (
	DefaultInitialBackoff = time.Second
	DefaultMaxBackoff     = 5 * time.Minute
)

// DefaultQPS and DefaultBurst are the rate of the agent's busiest clients: the work agent's and
// the add-on agent's clients of the hub, made with the agent's hub credentials (HubAccess), and
// the work agent's client of the spoke when the spoke's kubeconfig sets no rate. They are OCM's
// agent's defaults: client-go's own (5 requests a second, bursts of 10) would hold back a work
// agent that applies and reports hundreds of works, and a bound is still needed, since one hub
// serves the agents of every cluster of the fleet. `flotilla agent` sets them with
// --kube-api-qps and --kube-api-burst (internal/agent.Options).
const (
	DefaultQPS   = 50
	DefaultBurst = 100
)

// Default bounds on the wait for a certificate. An administrator approves the first request;
// the hub approves a renewal within seconds when it runs, so a renewal not approved in minutes
// is worth asking again (the hub may have lost it).
const (
	DefaultApprovalTimeout        = 10 * time.Minute
	DefaultRenewalApprovalTimeout = 5 * time.Minute
)

// requestTimeout bounds one request to a server, so that a server that accepts a connection
// but never answers cannot stall a loop.
const requestTimeout = 30 * time.Second

// Agent registers a cluster and keeps it registered. It is a set of loops (Loops) that share
// the hub credentials (Hub), the last ManagedCluster read and the spoke's inventory.
type Agent struct {
	opts  Options
	spoke kubernetes.Interface
	// bootstrap and bootstrapKube reach the hub with the bootstrap identity.
	bootstrap     client.Client
	bootstrapKube kubernetes.Interface
	hub           HubAccess
	// cluster is the last ManagedCluster read with the agent's credentials; nil until read.
	cluster shared[*clusterv1.ManagedCluster]
	// inventory is the spoke's last inventory; nil until read.
	inventory shared[*Inventory]
	// period is the lease period of the last ManagedCluster read. It signals a change, so that
	// the lease loop renews at a new period at once rather than after a round of the old one.
	period shared[time.Duration]
	// renewed is the RenewTime of the last renewal the hub took (LastRenewed).
	renewed shared[time.Time]
}

// New checks the options and returns an agent.
func New(opts Options) (*Agent, error) {
	if opts.ClusterName == "" || opts.AgentID == "" {
		return nil, errors.New("the agent needs a cluster name (--cluster-name) and an agent id")
	}
	if err := ValidateClusterName("cluster name", opts.ClusterName); err != nil {
		return nil, err
	}
	if opts.Bootstrap == nil || opts.Spoke == nil {
		return nil, errors.New("the agent needs a bootstrap kubeconfig for the hub and a kubeconfig for the spoke")
	}
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	if opts.SecretName == "" {
		opts.SecretName = DefaultSecretName
	}
	if opts.Poll == 0 {
		opts.Poll = time.Second
	}
	if opts.InitialBackoff <= 0 {
		opts.InitialBackoff = DefaultInitialBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = DefaultMaxBackoff
	}
	opts.MaxBackoff = max(opts.MaxBackoff, opts.InitialBackoff)
	if opts.ApprovalTimeout <= 0 {
		opts.ApprovalTimeout = DefaultApprovalTimeout
	}
	if opts.RenewalApprovalTimeout <= 0 {
		opts.RenewalApprovalTimeout = DefaultRenewalApprovalTimeout
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.LeaseDurationSeconds == 0 {
		opts.LeaseDurationSeconds = clusterv1.DefaultLeaseDurationSeconds
	}
	if err := ValidateExternalServerURLs("ExternalServerURLs", opts.ExternalServerURLs); err != nil {
		return nil, err
	}
	spoke, err := kubernetes.NewForConfig(opts.Spoke)
	if err != nil {
		return nil, err
	}
	a := &Agent{opts: opts, spoke: spoke}
	// Neither client talks to the hub before it is used.
	if a.bootstrap, err = client.New(opts.Bootstrap, client.Options{Scheme: scheme.Scheme}); err != nil {
		return nil, a.bootstrapErr("make a client", err)
	}
	if a.bootstrapKube, err = kubernetes.NewForConfig(opts.Bootstrap); err != nil {
		return nil, a.bootstrapErr("make a client", err)
	}
	return a, nil
}

// Hub is the agent's hub credentials, for loops of other agents that talk to the hub as this
// cluster (the work and add-on agents).
func (a *Agent) Hub() *HubAccess { return &a.hub }

// Loops are the agent's controllers, each on its own schedule:
//
//   - clientcert: reuses the stored credentials or registers with the bootstrap kubeconfig
//     (ManagedCluster and certificate request, waiting for approval up to ApprovalTimeout);
//     renews the certificate at 80% of its lifetime; registers again when it expired or the hub
//     refuses it. It alone sets Hub.
//   - acceptance: reads the ManagedCluster with the current credentials, every Poll until the hub
//     accepts the cluster and every lease period after, and shares it with the other loops.
//   - lease: renews the Lease every lease period plus up to 25% jitter while the cluster is
//     accepted, and at once when the ManagedCluster's period changes; it reads nothing from the
//     spoke.
//   - inventory: reads the spoke's nodes, ClusterClaims and version every lease period.
//   - status: reports Joined, Available (the spoke's /livez) and the inventory in the
//     ManagedCluster's status, writing only what changed.
//
// Each call returns new loops: run them once.
func (a *Agent) Loops() []loop.Loop {
	cert, inventory := &certLoop{a: a}, &inventoryLoop{a: a}
	return []loop.Loop{
		{Name: "clientcert", Step: cert.step, Wake: []func() <-chan struct{}{a.hub.Changed}},
		{Name: "acceptance", Step: a.acceptanceStep, Wake: []func() <-chan struct{}{a.hub.Changed}, MaxBackoff: a.leasePeriod},
		{Name: "lease", Step: a.leaseStep, Wake: []func() <-chan struct{}{a.period.Changed}, MaxBackoff: a.leasePeriod},
		{Name: "inventory", Step: inventory.step, MaxBackoff: a.leasePeriod},
		{Name: "status", Step: a.statusStep, Wake: []func() <-chan struct{}{a.cluster.Changed, a.inventory.Changed}, MaxBackoff: a.leasePeriod},
	}
}

// Runner runs loops with the agent's clock, log and backoff, and logs their failures explained
// (explain.go).
func (a *Agent) Runner() loop.Runner {
	return loop.Runner{
		Clock: a.opts.Clock, Log: a.opts.Log, Explain: explain, InitialBackoff: a.opts.InitialBackoff, MaxBackoff: a.opts.MaxBackoff,
		Values: []any{"cluster", a.opts.ClusterName},
	}
}

// Run joins the hub (or reuses stored credentials) and keeps the cluster registered until ctx
// ends, and only then returns, with ctx's error. A failed step (a hub or spoke that does not
// answer, credentials refused, a denied certificate request, ...) is logged, saying what failed
// and what would fix it, and its loop tries again after a backoff.
func (a *Agent) Run(ctx context.Context) error {
	return a.Runner().Run(ctx, a.Loops()...)
}

// accepted returns the last ManagedCluster read if the hub accepts the cluster, else nil.
func (a *Agent) accepted() *clusterv1.ManagedCluster {
	if mc := a.cluster.Get(); mc != nil && mc.Spec.HubAcceptsClient {
		return mc
	}
	return nil
}

func (a *Agent) ensureNamespace(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: a.opts.Namespace}}
	if _, err := a.spoke.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return a.spokeErr("create the agent namespace "+a.opts.Namespace, err)
	}
	return nil
}

// logFailure logs a failed step with what would fix it.
func (a *Agent) logFailure(err error, keysAndValues ...any) {
	a.opts.Log.Error(err, explain(err), append([]any{"cluster", a.opts.ClusterName}, keysAndValues...)...)
}

func (a *Agent) secret() string { return a.opts.Namespace + "/" + a.opts.SecretName }

func (a *Agent) spokeErr(step string, err error) error {
	return &stepError{Step: step, Identity: spokeIdentity, Server: host(a.opts.Spoke), Cluster: a.opts.ClusterName, Secret: a.secret(), Err: err}
}

func (a *Agent) bootstrapErr(step string, err error) error {
	return &stepError{Step: step, Identity: bootstrapIdentity, Server: host(a.opts.Bootstrap), Cluster: a.opts.ClusterName, Secret: a.secret(), Err: err}
}

func (a *Agent) agentErr(server, step string, err error) error {
	return &stepError{Step: step, Identity: agentIdentity, Server: server, Cluster: a.opts.ClusterName, Secret: a.secret(), Err: err}
}

// hubErr is a step that failed with the agent's credentials c. A 401 means the hub no longer
// takes them: the client certificate loop learns of it and registers again.
func (a *Agent) hubErr(c *HubClients, step string, err error) error {
	se := a.agentErr(host(c.Config), step, err)
	if unauthorized(err) {
		a.hub.Refused(c, se)
	}
	return se
}

func host(cfg *rest.Config) string {
	if cfg == nil {
		return ""
	}
	return cfg.Host
}

// hubEndpoint is the hub's address and CA, for the kubeconfigs the agent writes.
func hubEndpoint(cfg *rest.Config) (*rest.Config, error) {
	ca, err := kubeconfig.CA(cfg)
	if err != nil {
		return nil, err
	}
	return &rest.Config{Host: cfg.Host, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}, nil
}
