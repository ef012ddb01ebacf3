package agent

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/agent"
	"github.com/flotilla/flotilla/internal/agent/addon"
	"github.com/flotilla/flotilla/internal/agent/builtin/dynamicscoring"
	"github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
)

// NewCommand returns `flotilla agent`, which reads time from clk.
func NewCommand(_ streams.IO, clk clock.WithTicker) *cobra.Command {
	opts := agent.DefaultOptions()
	opts.Clock = clk
	var bootstrapKubeconfig string
	var kube kubeflags.Flags
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Register this cluster with a hub, keep it registered and apply its ManifestWorks",
		Long: "Joins the cluster to the hub with a bootstrap kubeconfig (from `flotilla init` on the hub), waits for an\n" +
			"administrator to run `flotilla accept CLUSTER`, then renews the cluster's lease and status. The hub\n" +
			"credentials are kept in a Secret on this cluster, so a restarted agent does not register again.\n" +
			"Once accepted, it applies the ManifestWorks of the cluster's namespace on the hub to this cluster\n" +
			"and reports their status back. It also gives the cluster's add-ons their hub credentials (Secrets\n" +
			"<addon>-hub-kubeconfig in their install namespaces) and reports their health from their Leases.\n" +
			"Like OCM's klusterlet, it creates the namespace " + addon.DefaultInstallNamespace + " where OCM's add-ons\n" +
			"install their agents (--disable-default-addon-namespace to not), and never deletes it.",
		Example: "  flotilla agent --cluster-name gpu-east --bootstrap-kubeconfig bootstrap.kubeconfig --kubeconfig spoke.kubeconfig",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Input that cannot work is refused here; everything else, including a hub that refuses
			// the bootstrap kubeconfig, the agent retries and explains in its log.
			spokeConfig, err := kube.Load()
			if err != nil {
				return err
			}
			opts.Spoke = spokeConfig.Config
			if opts.Bootstrap, err = loadBootstrap(cmd.Context(), opts.Spoke, bootstrapKubeconfig, &opts.ClusterName); err != nil {
				return err
			}
			if err := registration.ValidateClusterName("--cluster-name", opts.ClusterName); err != nil {
				return err
			}
			if err := registration.ValidateExternalServerURLs("--spoke-external-server-urls", opts.ExternalServerURLs); err != nil {
				return err
			}
			for _, e := range [][2]string{{"--work-executor", opts.WorkExecutor}, {"--policy-executor", opts.PolicyExecutor}} {
				if e[1] != "" {
					if err := agent.ValidateExecutor(e[0], e[1]); err != nil {
						return err
					}
				}
			}
			a, err := agent.New(opts)
			if err != nil {
				return err
			}
			return a.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.ClusterName, "cluster-name", "", "name of this cluster on the hub, a DNS label (default: the name `flotilla join` stored)")
	f.StringVar(&opts.AgentID, "agent-id", "", "identity of this agent among the cluster's agents (default: the host name)")
	f.StringVar(&bootstrapKubeconfig, "bootstrap-kubeconfig", "", "hub kubeconfig with the bootstrap identity (default: the one `flotilla join` stored on this cluster)")
	kube.AddFlags(f, "this (spoke) cluster")
	f.StringSliceVar(&opts.ExternalServerURLs, "spoke-external-server-urls", nil,
		"https addresses at which the hub and its consumers reach this cluster's API server, written with this cluster's CA into "+
			"spec.managedClusterClientConfigs of the ManagedCluster when the agent registers (as OCM's klusterlet flag; the ClusterProfiles' access provider and Kueue use the first)")
	f.Float32Var(&opts.QPS, "kube-api-qps", opts.QPS,
		"requests per second of the clients that apply ManifestWorks and watch add-ons, to the hub's API server and to this cluster's")
	f.IntVar(&opts.Burst, "kube-api-burst", opts.Burst, "burst of requests of those clients (--kube-api-qps)")
	f.BoolVar(&opts.DynamicScoringAllowLocal, strings.TrimPrefix(dynamicscoring.AllowLocalFlag, "--"), false,
		"let the dynamic-scoring add-on reach loopback and link-local addresses (local fleets and tests; cloud metadata addresses stay refused)")
	f.DurationVar(&opts.CertificateLifetime, "certificate-lifetime", 0, "lifetime to ask for the hub client certificate (at least 10m; default: the signer's)")
	f.StringVar(&opts.WorkExecutor, "work-executor", "",
		"NAMESPACE/NAME of a ServiceAccount that applies, reads and removes the manifests of ManifestWorks without an executor, "+
			"by impersonation, so that the agent's own identity never applies one (the restricted mode; grant that account only what works may do). "+
			"Default: the agent applies them with its own rights, as OCM's work agent")
	f.StringVar(&opts.PolicyExecutor, "policy-executor", "",
		"NAMESPACE/NAME of a ServiceAccount as which the add-on config-policy-controller reads, creates, updates and deletes the objects "+
			"that policies check and enforce, by impersonation (grant that account what inform may read and enforce may write). "+
			"Default: the agent's own identity")
	f.BoolVar(&opts.DisableDefaultAddOnNamespace, "disable-default-addon-namespace", false,
		"do not create the namespace "+addon.DefaultInstallNamespace+", where OCM's add-ons install their agents (as OCM's klusterlet option of that name)")
	return cmd
}

// loadBootstrap returns the hub kubeconfig with the bootstrap identity: the file path
// (--bootstrap-kubeconfig), or, when path is empty, what `flotilla join` stored on the spoke,
// whose cluster name also becomes *clusterName when that is empty.
func loadBootstrap(ctx context.Context, spoke *rest.Config, path string, clusterName *string) (*rest.Config, error) {
	if path != "" {
		return registration.LoadKubeconfig("--bootstrap-kubeconfig", path,
			"the bootstrap kubeconfig that `flotilla init` printed on the hub")
	}
	cs, err := kubernetes.NewForConfig(spoke)
	if err != nil {
		return nil, err
	}
	stored, cfg, err := registration.LoadBootstrap(ctx, cs)
	if err != nil {
		return nil, err
	}
	if *clusterName == "" {
		*clusterName = stored
	}
	return cfg, nil
}
