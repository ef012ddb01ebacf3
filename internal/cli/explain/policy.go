package explain

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/printing"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/hub/fleetview"
)

func newPolicyCommand(io streams.IO, clk clock.PassiveClock, newClient kubeflags.ReaderFunc) *cobra.Command {
	var kube kubeflags.Flags
	var cluster string
	cmd := &cobra.Command{
		Use:   "policy NAMESPACE/NAME --cluster CLUSTER",
		Short: "Say how a cluster differs from what a Policy asks, field by field",
		Long: "Reads the cluster's copy of a root Policy from the hub (<namespace>.<name> in the cluster's namespace) and\n" +
			"prints, for each template, its compliance and latest message, then each object it found not as\n" +
			"specified or missing, with the differences field by field as the cluster's config-policy-controller\n" +
			"recorded them (`data.region is us-east, want eu-west`). A template's recordDiff None or Log, and a\n" +
			"Secret, record no differences.\n\n" +
			"NAME alone is in the namespace of the kubeconfig's context.",
		Example: `  flotilla explain policy governance/data-residency-eu --cluster gpu-west`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cluster == "" {
				return fmt.Errorf("--cluster is required: name the cluster whose differences to show (`flotilla describe policy %s` lists the policy's clusters)", args[0])
			}
			return runPolicy(cmd.Context(), io, clk, newClient, kube, args[0], cluster)
		},
	}
	kube.AddFlags(cmd.Flags(), "the hub")
	cmd.Flags().StringVar(&cluster, "cluster", "", "the cluster to explain (required)")
	return cmd
}

func runPolicy(ctx context.Context, io streams.IO, clk clock.PassiveClock, newClient kubeflags.ReaderFunc, kube kubeflags.Flags, arg, cluster string) error {
	c, hub, err := newClient(kube)
	if err != nil {
		return err
	}
	ns, name, err := namespacedName("policy", arg, hub.Namespace)
	if err != nil {
		return err
	}
	p := &policyv1.Policy{}
	key := client.ObjectKey{Namespace: cluster, Name: policyv1.ReplicatedName(ns, name)}
	if err := c.Get(ctx, key, p); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("cluster %s has no copy of Policy %s/%s (no Policy %s/%s on the hub of kubeconfig %s): "+
				"the policy is not placed there, or not yet; `%s` lists where it is", cluster, ns, name, key.Namespace, key.Name, hub.Source,
				strings.TrimSpace("flotilla describe policy "+name+" -n "+ns+" "+kube.Args()))
		}
		return fmt.Errorf("%w, on the hub of kubeconfig %s", err, hub.Source)
	}
	if !fleetview.IsHubCopy(p, cluster) {
		return fmt.Errorf("the Policy %s/%s on the hub is not the hub's copy of %s/%s for cluster %s (it lacks the labels the hub's copies carry)", key.Namespace, key.Name, ns, name, cluster)
	}
	return writePolicy(io.Out, ns, name, cluster, p, clk)
}

// writePolicy prints copy's templates with their non-compliant objects and differences.
func writePolicy(w io.Writer, ns, name, cluster string, copy *policyv1.Policy, clk clock.PassiveClock) error {
	ex := fleetview.ExplainPolicy(ns, name, cluster, copy)
	var b strings.Builder
	fmt.Fprintf(&b, "Policy %s/%s on cluster %s: %s\n", ns, name, cluster, cmp.Or(ex.Compliant, "not reported yet"))
	if len(ex.Templates) == 0 {
		b.WriteString("The cluster has reported nothing for its templates yet.\n")
	}
	for _, t := range ex.Templates {
		fmt.Fprintf(&b, "\nTemplate %s: %s\n", t.Name, printing.OrDash(t.Compliant))
		if t.MessageTime != nil {
			fmt.Fprintf(&b, "  %s (%s ago)\n", t.Message, printing.Age(*t.MessageTime, clk))
		}
		for _, o := range t.Objects {
			fmt.Fprintf(&b, "  %s: %s (%s)\n", o.Object, printing.OrDash(o.Compliant), printing.OrDash(o.Reason))
			switch {
			case len(o.Diff) > 0:
				for _, line := range o.Diff {
					fmt.Fprintf(&b, "    %s\n", line)
				}
			case o.Missing:
				b.WriteString("    the cluster has no such object\n")
			default:
				b.WriteString("    no differences recorded (recordDiff None or Log, or a Secret)\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
