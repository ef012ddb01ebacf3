package hub

import (
	"context"
	"fmt"

	"github.com/flotilla/flotilla/config/rbac"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/hub"
	"github.com/flotilla/flotilla/internal/hub/addontemplate"
	"github.com/flotilla/flotilla/internal/hub/flower"
	"github.com/flotilla/flotilla/internal/hub/kueue"
	"github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/hub/webhook"
	"github.com/flotilla/flotilla/internal/version"
	dashboardassets "github.com/flotilla/flotilla/web/dashboard"
)

// NewCommand returns `flotilla hub`, which reads time from clk.
func NewCommand(_ streams.IO, clk clock.WithTicker) *cobra.Command {
	opts := hub.DefaultOptions()
	opts.Clock = clk
	opts.WebhookAddress = hub.DefaultWebhookAddress
	opts.ExplainAddress = hub.DefaultExplainAddress
	var kube kubeflags.Flags
	var webhookService, addonManagerIdentity string
	flowerTLS := true
	multiKueueFencing := true
	var kueueCredentials string
	cmd := &cobra.Command{
		Use:   "hub",
		Short: "Run the hub's controllers against the hub's API server",
		Long: "Runs registration (cluster acceptance, agent access, certificate renewals) and the hub's other controllers.\n" +
			"Replicas elect a leader through a Lease, so a standby can take over.\n\n" +
			"Every replica serves the validating admission webhook; the leader writes its address into\n" +
			"ValidatingWebhookConfiguration flotilla-hub and puts it back if it is changed or deleted. The configuration\n" +
			"outlives the hub and its failurePolicy is Fail: while no hub runs, ManagedCluster and ManagedClusterSetBinding\n" +
			"writes are refused. To write them without a hub, delete it (kubectl delete validatingwebhookconfiguration\n" +
			"flotilla-hub); the next leader writes it again.\n\n" +
			"The hub serves placements' explanations over HTTPS (--explain-bind-address) to callers whose bearer token\n" +
			"the API server accepts and who may get the placement; see docs/placement.md.\n\n" +
			"With --dashboard-bind-address the hub also serves the web dashboard over HTTPS to viewers who log in\n" +
			"with their own bearer token; each sees what the hub's RBAC lets that token see (docs/dashboard.md).\n\n" +
			"The hub needs only the roles in config/rbac: ClusterRole flotilla-hub, and Role flotilla-hub in the leader\n" +
			"election namespace (which also lets it impersonate " + addontemplate.OCMManagerServiceAccount + " there, for --addon-manager-identity).\n" +
			"It binds ClusterRole " + rbac.ManagedServiceAccountAgentName + " for cluster agents, which `flotilla init` and the hub chart make.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if webhookService != "" {
				ref, err := webhook.ParseServiceRef("--webhook-service", webhookService)
				if err != nil {
					return err
				}
				opts.WebhookService = ref
			}
			id, err := addontemplate.ParseIdentity("--addon-manager-identity", addonManagerIdentity)
			if err != nil {
				return err
			}
			opts.AddonManagerIdentity = id
			opts.Flower.Insecure = !flowerTLS
			opts.NoMultiKueueFencing = !multiKueueFencing
			if opts.KueueCredentials, err = kueue.ParseSource(kueueCredentials); err != nil {
				return err
			}
			if err := opts.Flower.Validate(); err != nil {
				return err
			}
			hubConfig, err := kube.Load()
			if err != nil {
				return err
			}
			cfg := hubConfig.Config
			// The hub's namespace holds the leader election Lease and the dashboard's logouts.
			if opts.LeaderElection || (opts.DashboardAddress != "" && opts.DashboardAddress != "0") {
				if err := ensureNamespace(cmd.Context(), cfg, opts.LeaderElectionNamespace); err != nil {
					return err
				}
			}
			opts.DashboardAssets = dashboardassets.FS()
			mgr, err := hub.NewManager(cfg, opts)
			if err != nil {
				return err
			}
			return mgr.Start(cmd.Context())
		},
	}
	f := cmd.Flags()
	kube.AddFlags(f, "the hub cluster")
	f.Float32Var(&opts.QPS, "kube-api-qps", opts.QPS, "requests per second to the hub API server")
	f.IntVar(&opts.Burst, "kube-api-burst", opts.Burst, "burst of requests to the hub API server")
	f.BoolVar(&opts.LeaderElection, "leader-elect", opts.LeaderElection, "elect a leader among replicas through a Lease")
	f.StringVar(&opts.LeaderElectionNamespace, "leader-election-namespace", opts.LeaderElectionNamespace, "namespace of the leader election Lease")
	f.StringVar(&opts.HealthProbeAddress, "health-probe-bind-address", opts.HealthProbeAddress, "address of /healthz and /readyz (0 disables)")
	f.StringVar(&opts.MetricsAddress, "metrics-bind-address", opts.MetricsAddress, "address of /metrics (0 disables)")
	f.StringVar(&opts.PprofAddress, "pprof-bind-address", opts.PprofAddress,
		"address of Go's /debug/pprof (empty or 0: off; profiles show what is in memory, so bind it to loopback)")
	f.StringVar(&opts.WebhookAddress, "webhook-bind-address", opts.WebhookAddress,
		"address of the validating admission webhook, which the API server calls on its own host (port 0 picks a free port; 0 disables)")
	f.StringVar(&opts.WebhookCertDir, "webhook-cert-dir", opts.WebhookCertDir,
		"directory with the webhook's tls.crt, tls.key and optionally ca.crt (default: a certificate made at start)")
	f.StringVar(&webhookService, "webhook-service", "",
		"NAMESPACE/NAME[:PORT] of the Service in front of the hub's replicas, when the hub runs in the cluster: the webhook configurations name it "+
			"instead of the leader's address (needs --webhook-cert-dir with a certificate for NAME.NAMESPACE.svc and its ca.crt)")
	f.StringVar(&opts.ExplainAddress, "explain-bind-address", opts.ExplainAddress,
		"address of the HTTPS server that explains placements (GET /explain/namespaces/NS/placements/NAME) to callers with a bearer token "+
			"allowed to get the placement (0 disables)")
	f.StringVar(&opts.ExplainCertDir, "explain-cert-dir", opts.ExplainCertDir,
		"directory with the explanation server's tls.crt and tls.key (default: a self-signed certificate made at start)")
	f.StringVar(&opts.DashboardAddress, "dashboard-bind-address", opts.DashboardAddress,
		"address of the HTTPS server of the web dashboard, for viewers who log in with their own bearer token (empty or 0: none; docs/dashboard.md)")
	f.StringVar(&opts.DashboardCertDir, "dashboard-cert-dir", opts.DashboardCertDir,
		"directory with the dashboard's tls.crt and tls.key, and session.key, the key that seals viewers' sessions, which every replica must share "+
			"(default: a self-signed certificate and a key made at start; the Helm chart issues both)")
	f.BoolVar(&opts.MirrorSIGDecisions, "sig-placement-decisions", opts.MirrorSIGDecisions,
		"mirror each placement's decisions into multicluster.x-k8s.io/v1alpha1 PlacementDecisions (KEP-5313)")
	f.BoolVar(&opts.NoPolicyPropagator, "no-policy-propagator", opts.NoPolicyPropagator,
		"leave the propagation of policies (policy.open-cluster-management.io) to another controller, such as OCM's governance-policy-propagator run against this hub")
	f.StringVar(&opts.DynamicScoringNamespace, "dynamic-scoring-namespace", opts.DynamicScoringNamespace,
		"the only namespace whose DynamicScorers the hub checks and agents run (whoever may create one there makes the hub and agents send requests, with tokens, where it points)")
	f.BoolVar(&opts.DynamicScoringAllowLocal, "dynamic-scoring-allow-local-addresses", opts.DynamicScoringAllowLocal,
		"let DynamicScorers' URLs reach loopback and link-local addresses (local fleets and tests; cloud metadata addresses stay refused)")
	f.BoolVar(&opts.FlowerSuperLinkAllowLocal, "flower-superlink-allow-local-addresses", opts.FlowerSuperLinkAllowLocal,
		"let a FederatedLearning's spec.server.superlink (other than flower-addon's) reach loopback and link-local addresses (local fleets and tests; cloud metadata addresses stay refused)")
	f.BoolVar(&opts.ClusterProfileAllowLocal, "cluster-profile-allow-local-addresses", opts.ClusterProfileAllowLocal,
		"let ClusterProfiles' access providers name loopback and link-local addresses of clusters' API servers (local fleets and tests; cloud metadata addresses stay refused)")
	f.Int64Var(&opts.ResourceUsageMaxAcceleratorsPerNode, "resource-usage-max-accelerators-per-node", opts.ResourceUsageMaxAcceleratorsPerNode,
		"the most GPUs or TPUs one node may report; a cluster's ResourceUsage above it is left out of the fleet's maxima that resource-usage-score is normalised by")
	f.StringVar(&opts.KueueNamespace, "kueue-namespace", opts.KueueNamespace, "Kueue's namespace on the hub (default kueue-system)")
	f.StringVar(&kueueCredentials, "kueue-credentials", string(kueue.SourceClusterProfile),
		"where MultiKueue takes its workers' credentials from: "+string(kueue.SourceClusterProfile)+" (each MultiKueueCluster names the worker's ClusterProfile; Kueue v0.15+ "+
			"with its MultiKueueClusterProfile gate and `flotilla credentials-plugin` configured for provider open-cluster-management) or "+
			string(kueue.SourceSecret)+" (kubeconfig Secrets multikueue-<cluster> the hub composes; docs/kueue.md)")
	f.BoolVar(&opts.KueueDispatcher, "kueue-dispatcher", opts.KueueDispatcher,
		"nominate MultiKueue workers in placement order (set when Kueue on the hub runs with multiKueue.dispatcherName flotilla.io/placement-ranked)")
	f.DurationVar(&opts.ClusterCleanupTimeout, "cluster-cleanup-timeout", registration.DefaultCleanupTimeout,
		"how long the hub waits, after a cluster is denied or deleted, for its agent to remove what the cluster's ManifestWorks applied; "+
			"after it the hub removes the works' finalizers itself, and what they applied may stay on the cluster (docs/registration.md)")
	f.BoolVar(&multiKueueFencing, "multikueue-fencing", multiKueueFencing,
		"fence every MultiKueue worker with the failover defaults (docs/failover.md); false: a worker is fenced only when a FailoverPolicy names a set it is in, "+
			"and a cut-off worker's jobs keep running there until Kueue's workerLostTimeout moves them")
	f.StringVar(&addonManagerIdentity, "addon-manager-identity", "",
		"NAMESPACE/NAME of the ServiceAccount the hub acts as (impersonates) to bind template add-ons' hubPermissions; the roles OCM add-ons "+
			"grant to OCM's add-on manager are then the ones it may bind (the hub chart sets "+addontemplate.OCMManagerNamespace+"/"+addontemplate.OCMManagerServiceAccount+
			"; empty: the hub binds as itself)")
	f.StringVar(&opts.Flower.SuperLinkImage, "flower-superlink-image", flower.DefaultSuperLinkImage,
		"image of the Flower SuperLink the hub runs in "+flower.Namespace+" while the add-on flower-addon is enabled on a cluster")
	f.StringVar(&opts.Flower.SuperNodeImage, "flower-supernode-image", flower.DefaultSuperNodeImage,
		"image of the Flower SuperNodes of flower-addon (IMAGE of AddOnDeploymentConfig "+flower.Namespace+"/flower-addon)")
	f.StringVar(&opts.Flower.Address, "flower-superlink-address", flower.DefaultAddress,
		"HOST[:PORT] where the clusters reach the SuperLink's Fleet API (port 9092 if left out): the SuperNodes' --superlink, and a name "+
			"of the SuperLink's TLS certificate besides its Service's; route it to Service "+flower.Namespace+"/superlink port fleet")
	f.StringVar(&opts.Flower.FrontImage, "flower-front-image", version.ImageRef(),
		"Flotilla's image, run as `flotilla flower-front` beside each Flower federation's own SuperLink (the Fleet and Runtime APIs for anyone, "+
			"the Control API for the hub only); the hub chart sets its own image")
	f.BoolVar(&flowerTLS, "flower-tls", true,
		"TLS between SuperNodes and the SuperLink, with certificates the hub issues from its CA (Secret "+flower.Namespace+"/flower-ca); "+
			"false runs both with --insecure, as OCM's flower-addon does by default")
	return cmd
}

func ensureNamespace(ctx context.Context, cfg *rest.Config, name string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the leader election namespace %s: %w", name, err)
	}
	return nil
}
