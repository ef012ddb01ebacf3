package join

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/cli/chartflags"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
)

// NewCommand returns `flotilla join`.
func NewCommand(io streams.IO) *cobra.Command {
	var clusterName, bootstrapKubeconfig string
	var kube kubeflags.Flags
	var inst bool
	var chart chartflags.Flags
	cmd := &cobra.Command{
		Use:   "join",
		Short: "Prepare this cluster to join a hub: check the bootstrap kubeconfig and store it on the cluster",
		Example: "  flotilla join --cluster-name gpu-east --bootstrap-kubeconfig bootstrap.kubeconfig --kubeconfig spoke.kubeconfig\n" +
			"  flotilla agent --kubeconfig spoke.kubeconfig\n" +
			"  flotilla join --install --cluster-name gpu-east --bootstrap-kubeconfig bootstrap.kubeconfig --context kind-gpu-east",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := registration.ValidateClusterName("--cluster-name", clusterName); err != nil {
				return err
			}
			bootstrap, err := registration.LoadKubeconfig("--bootstrap-kubeconfig", bootstrapKubeconfig,
				"the bootstrap kubeconfig that `flotilla init` wrote on the hub")
			if err != nil {
				return err
			}
			spokeConfig, err := kube.Load()
			if err != nil {
				return err
			}
			spoke := spokeConfig.Config
			// Ask the hub whether the bootstrap identity may register: this catches a kubeconfig for
			// the wrong hub, an expired token and a missing `flotilla init` before the agent starts.
			hub, err := kubernetes.NewForConfig(bootstrap)
			if err != nil {
				return err
			}
			if _, err := hub.Discovery().ServerResourcesForGroupVersion("cluster.open-cluster-management.io/v1"); err != nil {
				if apierrors.IsNotFound(err) {
					return fmt.Errorf("the hub at %s does not serve ManagedClusters (cluster.open-cluster-management.io/v1): its CRDs are missing; run `flotilla init --install` (or `flotilla install crds`) on the hub", bootstrap.Host)
				}
				return fmt.Errorf("the hub at %s did not answer with the bootstrap kubeconfig %s: %w (is it the kubeconfig `flotilla init` wrote for this hub, and is its token still valid?)",
					bootstrap.Host, bootstrapKubeconfig, err)
			}
			review, err := hub.AuthorizationV1().SelfSubjectAccessReviews().Create(cmd.Context(), &authorizationv1.SelfSubjectAccessReview{
				Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
					Group: "cluster.open-cluster-management.io", Resource: "managedclusters", Verb: "create",
				}},
			}, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("the hub at %s did not answer with the bootstrap kubeconfig %s: %w (is it the kubeconfig `flotilla init` wrote for this hub, and is its token still valid?)",
					bootstrap.Host, bootstrapKubeconfig, err)
			}
			if !review.Status.Allowed {
				return fmt.Errorf("the hub at %s does not let the bootstrap identity create ManagedClusters: run `flotilla init` on the hub, or use the kubeconfig it wrote", bootstrap.Host)
			}
			data, err := os.ReadFile(bootstrapKubeconfig)
			if err != nil {
				return err
			}
			cs, err := kubernetes.NewForConfig(spoke)
			if err != nil {
				return err
			}
			if inst {
				return installAgent(cmd.Context(), io, spoke, chart, clusterName, data, bootstrap.Host)
			}
			if err := registration.SaveBootstrap(cmd.Context(), cs, clusterName, data); err != nil {
				return err
			}
			_, err = fmt.Fprintf(io.Out, `Cluster %s is ready to join the hub at %s. Start its agent:

  %s

then accept it on the hub: flotilla accept %s --kubeconfig <hub kubeconfig>
`, clusterName, bootstrap.Host, strings.TrimSpace("flotilla agent "+kube.Args()), clusterName)
			return err
		},
	}
	cmd.Flags().StringVar(&clusterName, "cluster-name", "", "name of this cluster on the hub (a DNS label; required)")
	cmd.Flags().StringVar(&bootstrapKubeconfig, "bootstrap-kubeconfig", "", "bootstrap kubeconfig from `flotilla init` (required)")
	kube.AddFlags(cmd.Flags(), "the cluster that joins")
	cmd.Flags().BoolVar(&inst, "install", false, "install the agent on the cluster (the flotilla-agent chart) and wait until it runs, instead of only storing the bootstrap kubeconfig")
	chart.AddFlags(cmd.Flags(), "agent", registration.DefaultNamespace)
	return cmd
}
