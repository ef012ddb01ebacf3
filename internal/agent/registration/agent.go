package registration

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/conditions"
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
	// CertificateLifetime asks the signer for this lifetime; zero takes the signer's default.
	CertificateLifetime time.Duration
	// Poll is how often the agent checks on a pending request or acceptance; 1 s when zero.
	Poll time.Duration
	// InitialBackoff and MaxBackoff bound the wait before the agent tries again after a failed
	// registration or certificate renewal: it starts at InitialBackoff (1 s when zero), doubles
	// with each failure up to MaxBackoff (5 minutes when zero), and adds up to 10% jitter.
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

// Agent registers a cluster and keeps it registered.
type Agent struct {
	opts  Options
	spoke kubernetes.Interface
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
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.LeaseDurationSeconds == 0 {
		opts.LeaseDurationSeconds = clusterv1.DefaultLeaseDurationSeconds
	}
	spoke, err := kubernetes.NewForConfig(opts.Spoke)
	if err != nil {
		return nil, err
	}
	return &Agent{opts: opts, spoke: spoke}, nil
}

// backoff is the wait between failed attempts, fresh.
func (a *Agent) backoff() wait.Backoff {
	return wait.Backoff{
		Duration: a.opts.InitialBackoff, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: a.opts.MaxBackoff,
	}
}

// Run joins the hub (or reuses stored credentials) and renews the lease and status until ctx
// ends, and only then returns, with ctx's error. A failed attempt (a hub or spoke that does not
// answer, credentials refused, a denied certificate request, ...) is logged once, saying what
// failed and what would fix it, and tried again after the backoff. The backoff starts over once
// the agent has renewed its lease.
func (a *Agent) Run(ctx context.Context) error {
	o := a.opts
	backoff := a.backoff()
	failures := 0
	for {
		alive := false
		err := a.attempt(ctx, func() { alive = true })
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if alive {
			backoff, failures = a.backoff(), 0
		}
		failures++
		delay := backoff.Step()
		a.logFailure(err, "failures", failures, "retryIn", delay.Round(time.Millisecond).String())
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-o.Clock.After(delay):
		}
	}
}

// attempt runs the agent once: it registers unless the spoke holds usable credentials, then
// heartbeats. It returns only with an error; alive is called at every lease renewal.
func (a *Agent) attempt(ctx context.Context, alive func()) error {
	o := a.opts
	if err := a.ensureNamespace(ctx); err != nil {
		return err
	}
	creds, why, err := loadCredentials(ctx, a.spoke, o.Namespace, o.SecretName, o.ClusterName, o.Clock.Now())
	if err != nil {
		return a.spokeErr("read Secret "+a.secret(), err)
	}
	if creds == nil {
		o.Log.Info("registering with the hub", "cluster", o.ClusterName, "reason", why)
		if creds, err = a.register(ctx); err != nil {
			return err
		}
	} else {
		o.Log.Info("reusing stored hub credentials", "cluster", o.ClusterName, "expires", creds.cert.NotAfter)
	}
	return a.heartbeat(ctx, creds, alive)
}

func (a *Agent) ensureNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: a.opts.Namespace}}
	if _, err := a.spoke.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return a.spokeErr("create the agent namespace "+a.opts.Namespace, err)
	}
	return nil
}

// register creates the ManagedCluster and a certificate request with the bootstrap identity, and
// waits for the certificate.
func (a *Agent) register(ctx context.Context) (*credentials, error) {
	o := a.opts
	c, err := client.New(o.Bootstrap, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, a.bootstrapErr("make a client", err)
	}
	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: o.ClusterName},
		Spec:       clusterv1.ManagedClusterSpec{LeaseDurationSeconds: o.LeaseDurationSeconds},
	}
	if err := c.Create(ctx, mc); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, a.bootstrapErr("create ManagedCluster "+o.ClusterName, err)
	}
	bootstrap, err := kubernetes.NewForConfig(o.Bootstrap)
	if err != nil {
		return nil, a.bootstrapErr("make a client", err)
	}
	hub, err := hubEndpoint(o.Bootstrap)
	if err != nil {
		return nil, a.bootstrapErr("read the hub's CA", err)
	}
	o.Log.Info("waiting for an administrator to approve the certificate request and accept the cluster (flotilla accept " + o.ClusterName + ")")
	creds, err := requestCertificate(ctx, bootstrap, hub, o.ClusterName, o.AgentID, o.CertificateLifetime, o.Poll)
	if err != nil {
		return nil, a.bootstrapErr("request a hub client certificate", err)
	}
	if err := saveCredentials(ctx, a.spoke, o.Namespace, o.SecretName, o.ClusterName, o.AgentID, creds); err != nil {
		return nil, a.spokeErr("store the hub kubeconfig in Secret "+a.secret(), err)
	}
	return creds, nil
}

type hubClients struct {
	client client.Client
	kube   kubernetes.Interface
	config *rest.Config
}

func (a *Agent) hubClients(creds *credentials) (*hubClients, error) {
	cfg, err := creds.restConfig()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &hubClients{client: c, kube: kube, config: cfg}, nil
}

// heartbeat renews the lease and status every lease period until ctx ends or the certificate
// expires. It renews the certificate from 80% of its lifetime on; a failed renewal is retried
// after the backoff while the current certificate keeps the heartbeat going.
func (a *Agent) heartbeat(ctx context.Context, creds *credentials, alive func()) error {
	o := a.opts
	hub, err := a.hubClients(creds)
	if err != nil {
		return a.agentErr("", "use the stored hub kubeconfig", err)
	}
	renewAt, renewal := creds.renewAt(), a.backoff()
	unsaved := false // renewed credentials not yet stored on the spoke
	for {
		if !o.Clock.Now().Before(creds.cert.NotAfter) {
			return a.agentErr(hub.config.Host, "renew the hub client certificate", &certificateExpiredError{NotAfter: creds.cert.NotAfter})
		}
		period := o.Poll
		mc := &clusterv1.ManagedCluster{}
		err := hub.client.Get(ctx, client.ObjectKey{Name: o.ClusterName}, mc)
		switch {
		case err != nil:
			a.logFailure(a.agentErr(hub.config.Host, "read ManagedCluster "+o.ClusterName, err))
		case !mc.Spec.HubAcceptsClient:
			o.Log.V(1).Info("waiting for the hub to accept the cluster")
		default:
			period = time.Duration(leaseSeconds(mc)) * time.Second
			if err := a.renewLease(ctx, hub.client, mc); err != nil {
				a.logFailure(a.agentErr(hub.config.Host, "renew Lease "+o.ClusterName+"/"+clusterv1.ManagedClusterLeaseName, err))
				period = o.Poll
			} else {
				alive()
				if err := a.updateStatus(ctx, hub.client, mc); err != nil {
					// A conflict means the hub changed the cluster since it was read (labels, taints,
					// its own conditions): read again soon rather than a whole lease period later.
					if !apierrors.IsConflict(err) {
						a.logFailure(a.agentErr(hub.config.Host, "update the status of ManagedCluster "+o.ClusterName, err))
					}
					period = o.Poll
				}
			}
		}
		if unsaved {
			if err := saveCredentials(ctx, a.spoke, o.Namespace, o.SecretName, o.ClusterName, o.AgentID, creds); err != nil {
				a.logFailure(a.spokeErr("store the renewed hub kubeconfig in Secret "+a.secret(), err))
			} else {
				unsaved = false
			}
		}
		if now := o.Clock.Now(); !now.Before(renewAt) && mc.Spec.HubAcceptsClient {
			o.Log.Info("renewing the hub certificate", "expires", creds.cert.NotAfter)
			renewed, err := a.renewCertificate(ctx, hub)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				delay := renewal.Step()
				renewAt = now.Add(delay)
				a.logFailure(err, "retryIn", delay.Round(time.Millisecond).String(), "expires", creds.cert.NotAfter)
			} else {
				next, err := a.hubClients(renewed)
				if err != nil {
					return a.agentErr(hub.config.Host, "use the renewed hub kubeconfig", err)
				}
				creds, hub, renewAt, renewal = renewed, next, renewed.renewAt(), a.backoff()
				unsaved = true
				continue // store it and heartbeat with it at once
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-o.Clock.After(period):
		}
	}
}

// renewCertificate asks for a new certificate with the agent's own identity and waits for it.
func (a *Agent) renewCertificate(ctx context.Context, hub *hubClients) (*credentials, error) {
	o := a.opts
	hubEP, err := hubEndpoint(hub.config)
	if err != nil {
		return nil, a.agentErr(hub.config.Host, "read the hub's CA", err)
	}
	renewed, err := requestCertificate(ctx, hub.kube, hubEP, o.ClusterName, o.AgentID, o.CertificateLifetime, o.Poll)
	if err != nil {
		return nil, a.agentErr(hub.config.Host, "renew the hub client certificate", err)
	}
	return renewed, nil
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

func host(cfg *rest.Config) string {
	if cfg == nil {
		return ""
	}
	return cfg.Host
}

func (a *Agent) agentErr(server, step string, err error) error {
	return &stepError{Step: step, Identity: agentIdentity, Server: server, Cluster: a.opts.ClusterName, Secret: a.secret(), Err: err}
}

func (a *Agent) renewLease(ctx context.Context, c client.Client, mc *clusterv1.ManagedCluster) error {
	lease := &coordinationv1.Lease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: mc.Name, Name: clusterv1.ManagedClusterLeaseName}, lease); err != nil {
		return err
	}
	lease.Spec.RenewTime = &metav1.MicroTime{Time: a.opts.Clock.Now()}
	return c.Update(ctx, lease)
}

// updateStatus reports Joined and Available and the cluster's inventory (resources, version,
// claims; see ComputeInventory), writing only when a condition or the inventory changed, so a
// steady cluster causes no writes. If the spoke cannot be read, that is logged, the conditions are
// still reported and the previous inventory is kept.
func (a *Agent) updateStatus(ctx context.Context, c client.Client, mc *clusterv1.ManagedCluster) error {
	desired := mc.DeepCopy()
	now := metav1.NewTime(a.opts.Clock.Now())
	meta.SetStatusCondition(&desired.Status.Conditions, metav1.Condition{
		Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue, Reason: "ManagedClusterJoined",
		Message: "the agent holds a hub certificate and renews its lease", LastTransitionTime: now, ObservedGeneration: mc.Generation,
	})
	meta.SetStatusCondition(&desired.Status.Conditions, a.availability(ctx, mc.Generation, now))
	inv, warnings, invErr := a.inventory(ctx)
	for _, w := range warnings {
		a.opts.Log.Info("inventory: "+w, "cluster", a.opts.ClusterName)
	}
	if invErr == nil {
		desired.Status.Capacity, desired.Status.Allocatable = inv.Capacity, inv.Allocatable
		desired.Status.Version, desired.Status.ClusterClaims = inv.Version, inv.ClusterClaims
	} else {
		a.logFailure(invErr, "consequence", "the inventory on the hub is not updated")
	}
	if conditions.Equal(mc.Status.Conditions, desired.Status.Conditions) && inventoryEqual(&mc.Status, &desired.Status) {
		return nil
	}
	return c.Status().Patch(ctx, desired, client.MergeFromWithOptions(mc, client.MergeFromWithOptimisticLock{}))
}

// inventory reads the spoke's nodes, ClusterClaims and version and computes the inventory.
// Lists are served from the API server's cache (resourceVersion 0): the agent reads them every
// lease period and needs no stronger consistency than the next period brings.
func (a *Agent) inventory(ctx context.Context) (Inventory, []string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	nodes, err := a.spoke.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return Inventory{}, nil, a.spokeErr("list nodes", err)
	}
	claims, err := a.clusterClaims(ctx)
	if err != nil {
		return Inventory{}, nil, err
	}
	version, err := a.spoke.Discovery().ServerVersion()
	if err != nil {
		return Inventory{}, nil, a.spokeErr("read the Kubernetes version", err)
	}
	inv, warnings := ComputeInventory(nodes.Items, claims, version.GitVersion, clusterv1alpha1.DefaultMaxCustomClusterClaims)
	return inv, warnings, nil
}

// clusterClaimsPath lists ClusterClaims; they are cluster-scoped and live on the spoke.
var clusterClaimsPath = "/apis/" + clusterv1alpha1.GroupVersion.String() + "/clusterclaims"

// clusterClaims lists the spoke's ClusterClaims; a spoke without the ClusterClaim CRD has none.
// It asks the API server directly rather than through a typed client, which would need a REST
// mapping, so the agent needs nothing beyond its clientset.
func (a *Agent) clusterClaims(ctx context.Context) ([]clusterv1alpha1.ClusterClaim, error) {
	raw, err := a.spoke.Discovery().RESTClient().Get().AbsPath(clusterClaimsPath).Param("resourceVersion", "0").DoRaw(ctx)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, a.spokeErr("list ClusterClaims", err)
	}
	list := &clusterv1alpha1.ClusterClaimList{}
	if err := json.Unmarshal(raw, list); err != nil {
		return nil, a.spokeErr("decode the ClusterClaims", err)
	}
	return list.Items, nil
}

// availability asks the spoke's /livez, as OCM's agent does.
func (a *Agent) availability(ctx context.Context, generation int64, now metav1.Time) metav1.Condition {
	cond := metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable, LastTransitionTime: now, ObservedGeneration: generation}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := a.spoke.Discovery().RESTClient().Get().AbsPath("/livez").DoRaw(ctx); err != nil {
		cond.Status, cond.Reason = metav1.ConditionFalse, "ManagedClusterKubeAPIServerUnavailable"
		cond.Message = "the spoke's API server does not answer /livez: " + err.Error()
		return cond
	}
	cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, "ManagedClusterAvailable", "the spoke's API server is live"
	return cond
}

func leaseSeconds(mc *clusterv1.ManagedCluster) int32 {
	if mc.Spec.LeaseDurationSeconds > 0 {
		return mc.Spec.LeaseDurationSeconds
	}
	return clusterv1.DefaultLeaseDurationSeconds
}

// hubEndpoint is the hub's address and CA, for the kubeconfigs the agent writes.
func hubEndpoint(cfg *rest.Config) (*rest.Config, error) {
	ca, err := kubeconfig.CA(cfg)
	if err != nil {
		return nil, err
	}
	return &rest.Config{Host: cfg.Host, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}, nil
}
