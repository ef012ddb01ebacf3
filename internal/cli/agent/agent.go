package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla/flotilla/internal/agent/addon"
	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/agent/builtin/dynamicscoring"
	"github.com/flotilla/flotilla/internal/agent/builtin/kueuequeues"
	"github.com/flotilla/flotilla/internal/agent/builtin/multikueueworker"
	"github.com/flotilla/flotilla/internal/agent/builtin/resourceusage"
	"github.com/flotilla/flotilla/internal/agent/fence"
	"github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/agent/work"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
)

// workExecutorUser is the user name of the ServiceAccount NAMESPACE/NAME; "" for "".
func workExecutorUser(sa string) string {
	if sa == "" {
		return ""
	}
	ns, name, _ := strings.Cut(sa, "/")
	return "system:serviceaccount:" + ns + ":" + name
}

// NewCommand returns `flotilla agent`.
func NewCommand(_ streams.IO) *cobra.Command {
	var clusterName, agentID, bootstrapKubeconfig string
	var kube kubeflags.Flags
	var certLifetime time.Duration
	var dsAllowLocal bool
	var disableAddOnNamespace bool
	var workExecutor string
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
			spoke := spokeConfig.Config
			var bootstrap *rest.Config
			if bootstrapKubeconfig == "" {
				// What `flotilla join` stored on the cluster.
				cs, err := kubernetes.NewForConfig(spoke)
				if err != nil {
					return err
				}
				stored, cfg, err := registration.LoadBootstrap(cmd.Context(), cs)
				if err != nil {
					return err
				}
				if clusterName == "" {
					clusterName = stored
				}
				bootstrap = cfg
			} else if bootstrap, err = registration.LoadKubeconfig("--bootstrap-kubeconfig", bootstrapKubeconfig,
				"the bootstrap kubeconfig that `flotilla init` printed on the hub"); err != nil {
				return err
			}
			if err := registration.ValidateClusterName("--cluster-name", clusterName); err != nil {
				return err
			}
			if workExecutor != "" {
				if ns, name, ok := strings.Cut(workExecutor, "/"); !ok || ns == "" || name == "" || strings.Contains(name, "/") {
					return fmt.Errorf("--work-executor %q: give the ServiceAccount as NAMESPACE/NAME, such as open-cluster-management-agent/flotilla-work", workExecutor)
				}
			}
			if agentID == "" {
				host, _ := os.Hostname()
				agentID = host
			}
			a, err := registration.New(registration.Options{
				ClusterName: clusterName, AgentID: agentID, Bootstrap: bootstrap, Spoke: spoke,
				CertificateLifetime: certLifetime,
				Log:                 ctrl.Log.WithName("agent"),
			})
			if err != nil {
				return err
			}
			fencer, err := fence.New(fence.Options{
				ClusterName: clusterName, Agent: a, Hub: a.Hub(), Spoke: spoke, Log: ctrl.Log.WithName("fence"),
			})
			if err != nil {
				return err
			}
			w, err := work.New(work.Options{
				ClusterName: clusterName, AgentID: agentID, Hub: a.Hub(), Spoke: spoke,
				Log: ctrl.Log.WithName("work"), Fence: fencer, DefaultExecutor: workExecutorUser(workExecutor),
			})
			if err != nil {
				return err
			}
			ad, err := addon.New(addon.Options{
				ClusterName: clusterName, AgentID: agentID, Hub: a.Hub(), Spoke: spoke,
				CertificateLifetime: certLifetime, DisableDefaultAddOnNamespace: disableAddOnNamespace,
				BuiltIns: builtin.NewManager(clusterName, spoke, clock.RealClock{}, ctrl.Log.WithName("builtin"),
					resourceusage.AddOn{}, dynamicscoring.AddOn{AllowLocal: dsAllowLocal}, multikueueworker.AddOn{}, kueuequeues.AddOn{}),
				Log: ctrl.Log.WithName("addon"),
			})
			if err != nil {
				return err
			}
			// The work and add-on agents act with the credentials the registration agent keeps;
			// all stop with the command.
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			others := []func(context.Context) error{w.Run, ad.Run}
			done := make(chan error, len(others))
			for _, run := range others {
				go func() { done <- run(ctx) }()
			}
			// The fence is one more loop of the registration agent's (internal/agent/fence).
			err = a.Runner().Run(ctx, append(a.Loops(), fencer.Loop())...)
			cancel()
			for range others {
				if oerr := <-done; err == nil && oerr != nil && !errors.Is(oerr, context.Canceled) {
					err = oerr
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&clusterName, "cluster-name", "", "name of this cluster on the hub, a DNS label (default: the name `flotilla join` stored)")
	f.StringVar(&agentID, "agent-id", "", "identity of this agent among the cluster's agents (default: the host name)")
	f.StringVar(&bootstrapKubeconfig, "bootstrap-kubeconfig", "", "hub kubeconfig with the bootstrap identity (default: the one `flotilla join` stored on this cluster)")
	kube.AddFlags(f, "this (spoke) cluster")
	f.BoolVar(&dsAllowLocal, strings.TrimPrefix(dynamicscoring.AllowLocalFlag, "--"), false,
		"let the dynamic-scoring add-on reach loopback and link-local addresses (local fleets and tests; cloud metadata addresses stay refused)")
	f.DurationVar(&certLifetime, "certificate-lifetime", 0, "lifetime to ask for the hub client certificate (at least 10m; default: the signer's)")
	f.StringVar(&workExecutor, "work-executor", "",
		"NAMESPACE/NAME of a ServiceAccount that applies, reads and removes the manifests of ManifestWorks without an executor, "+
			"by impersonation, so that the agent's own identity never applies one (the restricted mode; grant that account only what works may do). "+
			"Default: the agent applies them with its own rights, as OCM's work agent")
	f.BoolVar(&disableAddOnNamespace, "disable-default-addon-namespace", false,
		"do not create the namespace "+addon.DefaultInstallNamespace+", where OCM's add-ons install their agents (as OCM's klusterlet option of that name)")
	return cmd
}
