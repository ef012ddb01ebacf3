package hub

import (
	"context"
	"fmt"
	"io/fs"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
	"github.com/flotilla/flotilla/internal/contract/scoringwire"
	"github.com/flotilla/flotilla/internal/hub/addon"
	"github.com/flotilla/flotilla/internal/hub/addonregistration"
	"github.com/flotilla/flotilla/internal/hub/addontemplate"
	"github.com/flotilla/flotilla/internal/hub/builtins"
	"github.com/flotilla/flotilla/internal/hub/clusterprofile"
	"github.com/flotilla/flotilla/internal/hub/clusterset"
	"github.com/flotilla/flotilla/internal/hub/dynamicscoring"
	"github.com/flotilla/flotilla/internal/hub/explain"
	"github.com/flotilla/flotilla/internal/hub/failover"
	"github.com/flotilla/flotilla/internal/hub/federatedlearning"
	"github.com/flotilla/flotilla/internal/hub/fleetqueue"
	"github.com/flotilla/flotilla/internal/hub/flower"
	"github.com/flotilla/flotilla/internal/hub/kueue"
	"github.com/flotilla/flotilla/internal/hub/lease"
	"github.com/flotilla/flotilla/internal/hub/managedserviceaccount"
	"github.com/flotilla/flotilla/internal/hub/placement"
	"github.com/flotilla/flotilla/internal/hub/policy"
	"github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/hub/resourceusage"
	"github.com/flotilla/flotilla/internal/hub/sigdecision"
	"github.com/flotilla/flotilla/internal/hub/webhook"
	"github.com/flotilla/flotilla/internal/hub/workreplicaset"
)

// Options configures the hub's manager.
type Options struct {
	// QPS and Burst limit the hub's requests to its API server. client-go's defaults (5 and 10)
	// starve a controller that watches thousands of clusters, and a placement costs the hub three
	// writes and an event: the defaults (2000 and 4000) are above what a kube-apiserver takes, so
	// that the API server's own priority and fairness, not the client, decides the pace.
	QPS   float32
	Burst int
	// LeaderElection makes replicas take turns through a Lease in LeaderElectionNamespace, the
	// hub's own namespace, where every replica also reads and writes the dashboard's logouts.
	LeaderElection          bool
	LeaderElectionNamespace string
	// LeaseDuration, RenewDeadline and RetryPeriod tune leader election; zero takes
	// controller-runtime's defaults (15 s, 10 s, 2 s).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// HealthProbeAddress serves /healthz and /readyz; MetricsAddress serves /metrics. "0"
	// disables either.
	HealthProbeAddress string
	MetricsAddress     string
	// PprofAddress serves Go's /debug/pprof, to name what the hub spends its CPU and memory on;
	// off when empty or "0" (the default: profiles reveal what is in memory, so bind it to
	// loopback).
	PprofAddress string
	Clock        clock.WithTicker
	// SkipNameValidation lets one process start several managers with the same controllers
	// (tests); controller-runtime otherwise refuses a controller name it has seen.
	SkipNameValidation bool
	// WebhookAddress is the host:port of the validating admission webhook (acceptance, set
	// membership, bindings, hub-owned taints); port 0 picks a free port, and "" or "0" runs none.
	// The API server calls it on its own host, so the hub must run beside it. Every replica
	// serves it; the leader's address is the one in the webhook configuration.
	WebhookAddress string
	// WebhookCertDir holds the webhook's serving certificate (tls.crt, tls.key, optionally
	// ca.crt); when empty the hub makes its own at every start.
	WebhookCertDir string
	// WebhookService, when set, is the Service in front of the hub's replicas (the hub runs in
	// the cluster, as the Helm chart installs it): the webhook configurations name it, not the
	// leader's address. It needs WebhookCertDir.
	WebhookService *webhook.ServiceRef
	// MirrorSIGDecisions mirrors each placement's PlacementDecisions into SIG Multicluster
	// (multicluster.x-k8s.io/v1alpha1, KEP-5313) PlacementDecisions; see internal/hub/sigdecision.
	MirrorSIGDecisions bool
	// NoPolicyPropagator leaves the governance API's propagation (internal/hub/policy) to another
	// controller: OCM's own governance-policy-propagator, run against this hub.
	NoPolicyPropagator bool
	// ExplainAddress is the host:port of the HTTPS server that explains placements to callers
	// the API server authenticates and authorizes (internal/hub/explain); "" or "0" runs none.
	ExplainAddress string
	// ExplainCertDir holds its serving certificate (tls.crt, tls.key); when empty the hub makes
	// a self-signed one at every start.
	ExplainCertDir string
	// DashboardAddress is the host:port of the HTTPS server of the web dashboard, for viewers
	// who log in with a bearer token (internal/hub/dashboard); "" or "0" runs none. DashboardCertDir
	// holds its certificate (tls.crt, tls.key) and the key that seals sessions (session.key), made
	// at start when empty or missing; DashboardAssets is the
	// built app (web/dashboard), which the CLI embeds.
	DashboardAddress string
	DashboardCertDir string
	DashboardAssets  fs.FS
	// KueueNamespace is Kueue's namespace, where the Placements of Kueue's AdmissionChecks and the
	// MultiKueue kubeconfig Secrets are (internal/hub/kueue); kueue.DefaultNamespace when "".
	KueueNamespace string
	// KueueCredentials is where MultiKueue takes its workers' credentials from
	// (kueue.SourceClusterProfile unless kueue.SourceSecret): ClusterProfiles and the credentials
	// plugin, or kubeconfig Secrets the hub composes (docs/kueue.md).
	KueueCredentials kueue.Source
	// KueueDispatcher runs Flotilla's MultiKueue dispatcher (kueue.DispatcherReconciler): set it when Kueue
	// on the hub runs with multiKueue.dispatcherName flotilla.io/placement-ranked.
	KueueDispatcher bool
	// DynamicScoringNamespace is the only namespace whose DynamicScorers the hub checks and
	// agents run (internal/hub/dynamicscoring); dynamicscoring.DefaultNamespace when "".
	DynamicScoringNamespace string
	// DynamicScoringAllowLocal lets DynamicScorers' URLs reach loopback and link-local addresses
	// (a local fleet, tests); metadata addresses stay refused.
	DynamicScoringAllowLocal bool
	// ResourceUsageMaxAcceleratorsPerNode caps the GPUs and TPUs one node of a cluster may
	// report; a ResourceUsage above it is left out of the fleet's maxima
	// (resourceusage.DefaultMaxAcceleratorsPerNode when zero).
	ResourceUsageMaxAcceleratorsPerNode int64
	// KueueTokenResync is how often the hub reads a MultiKueue worker's reported token again, for
	// the next one (kueue.TokenResync when zero).
	KueueTokenResync time.Duration
	// ClusterCleanupTimeout bounds how long the hub waits, after a cluster is denied or deleted,
	// for its agent to remove what the cluster's ManifestWorks applied before it removes the
	// works' finalizers itself (registration.DefaultCleanupTimeout when zero).
	ClusterCleanupTimeout time.Duration
	// AddonManagerIdentity, when set, is the ServiceAccount the hub acts as to create, update and
	// delete the RoleBindings of template add-ons' hubPermissions (internal/hub/addontemplate):
	// OCM add-ons grant their agents' roles to OCM's add-on manager ServiceAccount, which the
	// hub chart makes. Nil: the hub binds as itself.
	AddonManagerIdentity *addontemplate.Identity
	// Flower configures the built-in add-on flower-addon: the SuperLink the hub runs and the
	// address, TLS and image its SuperNodes get (internal/hub/flower).
	Flower flower.Options
	// NoMultiKueueFencing leaves MultiKueue's workers unfenced unless a FailoverPolicy names a set
	// they are in: then only Kueue's workerLostTimeout moves a cut-off worker's jobs, which keep
	// running there meanwhile (released MultiKueue's behavior; docs/failover.md). By default
	// every worker gets the fencing defaults (internal/contract/fencing).
	NoMultiKueueFencing bool
	// FlowerSuperLinkAllowLocal lets a FederatedLearning's spec.server.superlink, other than
	// flower-addon's, be on a loopback or link-local address (a local fleet, tests); metadata
	// addresses stay refused (internal/egress).
	FlowerSuperLinkAllowLocal bool
	// ClusterProfileAllowLocal lets the access provider of a ClusterProfile name a loopback or
	// link-local address of the cluster's API server (a local fleet, tests); metadata addresses
	// stay refused (internal/hub/clusterprofile).
	ClusterProfileAllowLocal bool
	// ResolveHubService maps the address of a Service of the hub's cluster (host:port) to where
	// this process reaches it; nil keeps it, for a hub that runs in its cluster and resolves
	// cluster DNS. A local fleet's hub, a process beside the cluster, sets it (the federated-
	// learning controller reads Flower's SuperLink through it).
	ResolveHubService func(ctx context.Context, hostport string) string
}

// DefaultWebhookAddress is the CLI's webhook address: loopback, on a free port, since only the
// API server calls it and the hub writes the port into the webhook configuration; a fixed port
// would keep two hubs on one machine (dev fleets, benchmarks) from starting.
//
// DefaultOptions leaves the webhook off: its configuration outlives the hub and refuses writes
// while nothing answers, which suits a deployed hub but not a program that starts and stops hubs.
const DefaultWebhookAddress = "127.0.0.1:0"

// DefaultExplainAddress is the CLI's address of the explanation server: loopback on a fixed port,
// so that clients know where to ask, as for metrics and health probes. DefaultOptions leaves it
// off, so that programs and tests that start several hubs do not contend for the port.
const DefaultExplainAddress = "127.0.0.1:9444"

// DefaultOptions are the flags' defaults, except for the webhook and the explanation server (see
// DefaultWebhookAddress and DefaultExplainAddress).
func DefaultOptions() Options {
	return Options{
		QPS: 2000, Burst: 4000,
		LeaderElection: true, LeaderElectionNamespace: "open-cluster-management-hub",
		HealthProbeAddress: "127.0.0.1:8081", MetricsAddress: "127.0.0.1:8080",
		DynamicScoringNamespace:             dynamicscoring.DefaultNamespace,
		ResourceUsageMaxAcceleratorsPerNode: resourceusage.DefaultMaxAcceleratorsPerNode,
		Clock:                               clock.RealClock{},
	}
}

// Leader election writes its Lease, and events about it, in the leader election namespace.
// controller-gen makes a Role of these rules in the default namespace (config/rbac); a hub run
// with another --leader-election-namespace needs the same Role there.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=open-cluster-management-hub,resources=leases,verbs=get;create;update
// +kubebuilder:rbac:groups="";events.k8s.io,namespace=open-cluster-management-hub,resources=events,verbs=create;patch;update

// flOwned selects what the federated-learning controller made (internal/hub/federatedlearning).
var flOwned = func() labels.Selector {
	r, err := labels.NewRequirement(federatedlearning.NameLabel, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	return labels.NewSelector().Add(*r)
}()

// LeaderElectionID names the Lease the hub's replicas contend for.
const LeaderElectionID = "flotilla-hub"

// NewManager builds the hub's manager with every controller added.
func NewManager(cfg *rest.Config, opts Options) (ctrl.Manager, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = opts.QPS, opts.Burst
	mo := ctrl.Options{
		Scheme:                  scheme.Scheme,
		LeaderElection:          opts.LeaderElection,
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: opts.LeaderElectionNamespace,
		HealthProbeBindAddress:  opts.HealthProbeAddress,
		Metrics:                 metricsserver.Options{BindAddress: opts.MetricsAddress},
		PprofBindAddress:        opts.PprofAddress,
		// Leaving leadership ends the process at once, so a replica that lost its Lease cannot act
		// beside the new leader.
		LeaderElectionReleaseOnCancel: true,
		Controller:                    config.Controller{SkipNameValidation: &opts.SkipNameValidation},
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			// The hub reads only the ConfigMaps it writes for built-in add-ons; a cluster's
			// namespace holds others (kube-root-ca.crt in every one) that it need not keep.
			&corev1.ConfigMap{}: {Label: labels.SelectorFromSet(labels.Set{builtinaddon.Label: scoringwire.Name})},
			// The federated-learning controller reads only the workloads it made.
			&appsv1.Deployment{}:            {Label: flOwned},
			&batchv1.Job{}:                  {Label: flOwned},
			&corev1.Service{}:               {Label: flOwned},
			&corev1.PersistentVolumeClaim{}: {Label: flOwned},
			// The propagator's copies of policies, one per policy and cluster, are kept without
			// their spec (internal/hub/policy).
			&policyv1.Policy{}: {Transform: policy.TrimCopy},
		}},
	}
	if opts.LeaseDuration > 0 {
		mo.LeaseDuration, mo.RenewDeadline, mo.RetryPeriod = &opts.LeaseDuration, &opts.RenewDeadline, &opts.RetryPeriod
	}
	mgr, err := ctrl.NewManager(cfg, mo)
	if err != nil {
		return nil, fmt.Errorf("creating the hub manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	if err := opts.Flower.Validate(); err != nil {
		return nil, err
	}
	templates := &addontemplate.Reconciler{Client: mgr.GetClient(), Clock: clk,
		Checks: map[string]addontemplate.Check{flower.AddonName: flower.Check(opts.Flower)}}
	if id := opts.AddonManagerIdentity; id != nil {
		if templates.Binder, err = addontemplate.NewBinder(cfg, *id, scheme.Scheme, mgr.GetRESTMapper()); err != nil {
			return nil, err
		}
		templates.Identity = id
	}
	for _, r := range []interface{ SetupWithManager(ctrl.Manager) error }{
		&registration.ManagedClusterReconciler{Client: mgr.GetClient(), Clock: clk, CleanupTimeout: opts.ClusterCleanupTimeout},
		&registration.RenewalReconciler{Client: mgr.GetClient(), Certificates: cs, Clock: clk},
		&addonregistration.Reconciler{Client: mgr.GetClient(), Certificates: cs, Clock: clk},
		&lease.Reconciler{Client: mgr.GetClient(), Clock: clk},
		&lease.TaintReconciler{Client: mgr.GetClient(), Clock: clk},
		&failover.PolicyReconciler{Client: mgr.GetClient(), Clock: clk},
		&clusterset.SetReconciler{Client: mgr.GetClient(), Clock: clk},
		&clusterset.BindingReconciler{Client: mgr.GetClient(), Clock: clk},
		&clusterset.DefaultLabelReconciler{Client: mgr.GetClient()},
		&clusterset.DefaultSets{Client: mgr.GetClient()},
		&clusterprofile.Reconciler{Client: mgr.GetClient(), Clock: clk, AllowLocal: opts.ClusterProfileAllowLocal},
		&managedserviceaccount.Reconciler{Client: mgr.GetClient(), Clock: clk},
		&placement.Reconciler{Client: mgr.GetClient(), Clock: clk},
		&workreplicaset.Reconciler{Client: mgr.GetClient(), Clock: clk},
		// The progressing controller uses an index the add-on controller adds: it comes after.
		&addon.Reconciler{Client: mgr.GetClient(), Clock: clk},
		&addon.ProgressingReconciler{Client: mgr.GetClient(), Clock: clk},
		&addon.FeatureLabelReconciler{Client: mgr.GetClient()},
		templates,
		&addontemplate.SignerReconciler{Client: mgr.GetClient(), Certificates: cs, Clock: clk},
		&builtins.Installer{Client: mgr.GetClient()},
		&flower.Reconciler{Client: mgr.GetClient(), Clock: clk, Options: opts.Flower},
		&resourceusage.Reconciler{Client: mgr.GetClient(), MaxAcceleratorsPerNode: opts.ResourceUsageMaxAcceleratorsPerNode},
		&dynamicscoring.ScorerReconciler{Client: mgr.GetClient(), Clock: clk, Namespace: opts.DynamicScoringNamespace, AllowLocal: opts.DynamicScoringAllowLocal},
		&dynamicscoring.ConfigReconciler{Client: mgr.GetClient(), Namespace: opts.DynamicScoringNamespace},
		&federatedlearning.Reconciler{Client: mgr.GetClient(), Clock: clk, SuperLinks: superLinks(opts.Flower),
			Flower: &federatedlearning.FlowerRuns{Resolve: opts.ResolveHubService, AllowLocal: opts.FlowerSuperLinkAllowLocal, Clock: clk}},
	} {
		if err := r.SetupWithManager(mgr); err != nil {
			return nil, err
		}
	}
	if opts.MirrorSIGDecisions {
		if err := (&sigdecision.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
			return nil, err
		}
	}
	if !opts.NoPolicyPropagator {
		if err := (&policy.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
			return nil, err
		}
		if err := (&policy.SetReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
			return nil, err
		}
		if err := (&policy.ScoreReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
			return nil, err
		}
	}
	// Kueue's CRDs are not Flotilla's: the integration runs where someone installed them (a hub
	// started first needs a restart to take it up).
	kueueServed, missing, err := kueue.Served(cs.Discovery())
	if err != nil {
		return nil, err
	}
	// MultiKueue's workers run fenced work (their Jobs) when Kueue is installed.
	if err := (&failover.ClusterReconciler{Client: mgr.GetClient(), KueueWorkers: kueueServed && !opts.NoMultiKueueFencing}).SetupWithManager(mgr); err != nil {
		return nil, err
	}
	if kueueServed {
		if err := (&kueue.RequeueReconciler{Client: mgr.GetClient(), Clock: clk}).SetupWithManager(mgr); err != nil {
			return nil, err
		}
		if err := (&kueue.Reconciler{Client: mgr.GetClient(), Clock: clk, Namespace: opts.KueueNamespace, Source: opts.KueueCredentials}).SetupWithManager(mgr); err != nil {
			return nil, err
		}
		if opts.KueueDispatcher {
			if err := (&kueue.DispatcherReconciler{Client: mgr.GetClient(), Clock: clk}).SetupWithManager(mgr); err != nil {
				return nil, err
			}
		}
		if err := (&kueue.CredentialsReconciler{Client: mgr.GetClient(), Namespace: opts.KueueNamespace, Resync: opts.KueueTokenResync,
			Source: opts.KueueCredentials}).SetupWithManager(mgr); err != nil {
			return nil, err
		}
		if err := (&fleetqueue.Reconciler{Client: mgr.GetClient(), Clock: clk}).SetupWithManager(mgr); err != nil {
			return nil, err
		}
	} else {
		mgr.GetLogger().Info("Kueue integration is off", "why", missing)
	}
	if opts.WebhookAddress != "" && opts.WebhookAddress != "0" {
		wo := webhook.Options{Address: opts.WebhookAddress, CertDir: opts.WebhookCertDir, Service: opts.WebhookService, Clock: clk}
		if err := webhook.Setup(mgr, cs, wo); err != nil {
			return nil, err
		}
	}
	if opts.ExplainAddress != "" && opts.ExplainAddress != "0" {
		eo := explain.Options{Address: opts.ExplainAddress, CertDir: opts.ExplainCertDir, Clock: clk}
		if err := explain.Setup(mgr, cs, eo); err != nil {
			return nil, err
		}
	}
	if opts.DashboardAddress != "" && opts.DashboardAddress != "0" {
		if err := setupDashboard(mgr, cfg, opts, clk, kueueServed); err != nil {
			return nil, err
		}
	}
	return mgr, nil
}

// superLinks are the settings of Flower federations' own SuperLinks, from flower-addon's: the
// clusters reach them at the host they reach flower-addon's SuperLink at.
func superLinks(o flower.Options) federatedlearning.SuperLinks {
	o = o.WithDefaults()
	return federatedlearning.SuperLinks{Host: o.Host(), SuperLinkImage: o.SuperLinkImage, SuperNodeImage: o.SuperNodeImage, FrontImage: o.FrontImage}
}
