package registration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/conditions"
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
	Poll  time.Duration
	Clock clock.WithTicker
	Log   logr.Logger
}

// Defaults for the Secret's location, as OCM's agent uses them.
const (
	DefaultNamespace  = "open-cluster-management-agent"
	DefaultSecretName = "hub-kubeconfig-secret"
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
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	if opts.SecretName == "" {
		opts.SecretName = DefaultSecretName
	}
	if opts.Poll == 0 {
		opts.Poll = time.Second
	}
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

// Run joins the hub (or reuses stored credentials) and renews the lease and status until ctx ends.
func (a *Agent) Run(ctx context.Context) error {
	o := a.opts
	if err := a.ensureNamespace(ctx); err != nil {
		return err
	}
	creds, why, err := loadCredentials(ctx, a.spoke, o.Namespace, o.SecretName, o.ClusterName, o.Clock.Now())
	if err != nil {
		return err
	}
	if creds == nil {
		o.Log.Info("registering with the hub", "cluster", o.ClusterName, "reason", why)
		if creds, err = a.register(ctx); err != nil {
			return err
		}
	} else {
		o.Log.Info("reusing stored hub credentials", "cluster", o.ClusterName, "expires", creds.cert.NotAfter)
	}
	for {
		hub, err := a.hubClients(creds)
		if err != nil {
			return err
		}
		renewed, err := a.heartbeat(ctx, hub, creds)
		if err != nil {
			return err
		}
		creds = renewed
	}
}

func (a *Agent) ensureNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: a.opts.Namespace}}
	if _, err := a.spoke.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the agent namespace %s on the spoke: %w", a.opts.Namespace, err)
	}
	return nil
}

// register creates the ManagedCluster and a certificate request with the bootstrap identity, and
// waits for the certificate.
func (a *Agent) register(ctx context.Context) (*credentials, error) {
	o := a.opts
	c, err := client.New(o.Bootstrap, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: o.ClusterName},
		Spec:       clusterv1.ManagedClusterSpec{LeaseDurationSeconds: o.LeaseDurationSeconds},
	}
	if err := c.Create(ctx, mc); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating ManagedCluster %s on the hub with the bootstrap kubeconfig: %w", o.ClusterName, err)
	}
	bootstrap, err := kubernetes.NewForConfig(o.Bootstrap)
	if err != nil {
		return nil, err
	}
	hub, err := hubEndpoint(o.Bootstrap)
	if err != nil {
		return nil, err
	}
	o.Log.Info("waiting for an administrator to approve the certificate request and accept the cluster (flotilla accept " + o.ClusterName + ")")
	creds, err := requestCertificate(ctx, bootstrap, hub, o.ClusterName, o.AgentID, o.CertificateLifetime, o.Poll)
	if err != nil {
		return nil, err
	}
	if err := saveCredentials(ctx, a.spoke, o.Namespace, o.SecretName, o.ClusterName, o.AgentID, creds); err != nil {
		return nil, err
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

// heartbeat renews the lease and status every lease period until the certificate is due for
// renewal (it then returns the new credentials) or ctx ends.
func (a *Agent) heartbeat(ctx context.Context, hub *hubClients, creds *credentials) (*credentials, error) {
	o := a.opts
	for {
		period := o.Poll
		mc := &clusterv1.ManagedCluster{}
		err := hub.client.Get(ctx, client.ObjectKey{Name: o.ClusterName}, mc)
		switch {
		case err != nil:
			o.Log.Info("cannot read the ManagedCluster on the hub; retrying", "error", err.Error())
		case !mc.Spec.HubAcceptsClient:
			o.Log.V(1).Info("waiting for the hub to accept the cluster")
		default:
			period = time.Duration(leaseSeconds(mc)) * time.Second
			if err := a.renewLease(ctx, hub.client, mc); err != nil {
				o.Log.Info("renewing the lease failed; retrying", "error", err.Error())
				period = o.Poll
			} else if err := a.updateStatus(ctx, hub.client, mc); err != nil {
				o.Log.Info("updating the ManagedCluster status failed; retrying", "error", err.Error())
			}
		}
		if !o.Clock.Now().Before(creds.renewAt()) && mc.Spec.HubAcceptsClient {
			o.Log.Info("renewing the hub certificate", "expires", creds.cert.NotAfter)
			hubEP, err := hubEndpoint(hub.config)
			if err != nil {
				return nil, err
			}
			renewed, err := requestCertificate(ctx, hub.kube, hubEP, o.ClusterName, o.AgentID, o.CertificateLifetime, o.Poll)
			if err != nil {
				return nil, fmt.Errorf("renewing the hub certificate: %w", err)
			}
			if err := saveCredentials(ctx, a.spoke, o.Namespace, o.SecretName, o.ClusterName, o.AgentID, renewed); err != nil {
				return nil, err
			}
			return renewed, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-o.Clock.After(period):
		}
	}
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
// steady cluster causes no writes. If the spoke cannot be read, the conditions are still
// reported and the previous inventory is kept.
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
	}
	if conditions.Equal(mc.Status.Conditions, desired.Status.Conditions) && inventoryEqual(&mc.Status, &desired.Status) {
		return invErr
	}
	return errors.Join(invErr, c.Status().Patch(ctx, desired, client.MergeFromWithOptions(mc, client.MergeFromWithOptimisticLock{})))
}

// inventory reads the spoke's nodes, ClusterClaims and version and computes the inventory.
// Lists are served from the API server's cache (resourceVersion 0): the agent reads them every
// lease period and needs no stronger consistency than the next period brings.
func (a *Agent) inventory(ctx context.Context) (Inventory, []string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	nodes, err := a.spoke.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return Inventory{}, nil, fmt.Errorf("listing the spoke's nodes: %w", err)
	}
	claims, err := a.clusterClaims(ctx)
	if err != nil {
		return Inventory{}, nil, err
	}
	version, err := a.spoke.Discovery().ServerVersion()
	if err != nil {
		return Inventory{}, nil, fmt.Errorf("reading the spoke's version: %w", err)
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
		return nil, fmt.Errorf("listing the spoke's ClusterClaims: %w", err)
	}
	list := &clusterv1alpha1.ClusterClaimList{}
	if err := json.Unmarshal(raw, list); err != nil {
		return nil, fmt.Errorf("decoding the spoke's ClusterClaims: %w", err)
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
	out := &rest.Config{Host: cfg.Host, TLSClientConfig: rest.TLSClientConfig{CAData: cfg.CAData}}
	if len(out.CAData) == 0 && cfg.CAFile != "" {
		data, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading the hub CA %s: %w", cfg.CAFile, err)
		}
		out.CAData = data
	}
	return out, nil
}
