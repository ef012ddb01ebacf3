package get

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
)

// options are the command's flags.
type options struct {
	kube          kubeflags.Flags
	namespace     string
	allNamespaces bool
	// cluster is -c: the namespace of a cluster's works.
	cluster string
	output  string
}

// NewCommand returns `flotilla get`.
func NewCommand(io streams.IO, clk clock.PassiveClock) *cobra.Command {
	return newCommand(io, clk, kubeflags.NewHubReader)
}

func newCommand(io streams.IO, clk clock.PassiveClock, newClient kubeflags.ReaderFunc) *cobra.Command {
	var o options
	validArgs := make([]string, len(resources))
	for i, r := range resources {
		validArgs[i] = r.name
	}
	cmd := &cobra.Command{
		Use:   "get clusters|clustersets|bindings|placements|works|addons|federatedlearnings",
		Short: "List the hub's managed clusters, cluster sets, cluster set bindings, placements, ManifestWorks, add-ons or FederatedLearnings",
		Long: "Lists ManagedClusters, ManagedClusterSets, ManagedClusterSetBindings, Placements, ManifestWorks,\n" +
			"ManagedClusterAddOns or FederatedLearnings on a hub as a table, or as a List with -o yaml or -o json.\n" +
			"Bindings, placements, works, add-ons and FederatedLearnings are listed in the namespace of -n, else of\n" +
			"the kubeconfig's context, or in every namespace with -A. A cluster's works and add-ons are in the\n" +
			"namespace named after it, which -c CLUSTER selects. A placement's row shows how many clusters it\n" +
			"selected, its decision groups and its conditions; `flotilla explain placement NS/NAME` says why. A\n" +
			"work's row shows its manifest count, its Applied, Available and Complete conditions and the\n" +
			"ManifestWorkReplicaSet that made it; `flotilla describe work CLUSTER/NAME` shows each manifest. A\n" +
			"FederatedLearning's row shows its framework, phase, last aggregated round of all, running clients of\n" +
			"those decided and its last metrics; -o wide adds its message, and `flotilla describe fl NAME` shows\n" +
			"its clients, rounds and timeline.\n\n" +
			"Accepted names: " + resourceNames() + ".",
		Example: `  flotilla get clusters                  # the hub of $KUBECONFIG or ~/.kube/config, as kubectl
  flotilla get clusters --kubeconfig "$(flotilla dev kubeconfig hub)"
  flotilla get bindings -A --context hub
  flotilla get mclsets -o yaml --kubeconfig hub.kubeconfig
  flotilla get placements -A
  flotilla get works -c gpu-east
  flotilla get works -A -o yaml
  flotilla get addons -c gpu-east
  flotilla get fl -n research -o wide`,
		ValidArgs: validArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := o.validate(args)
			if err != nil {
				return err
			}
			return run(cmd.Context(), io, clk, newClient, o, r)
		},
	}
	f := cmd.Flags()
	o.kube.AddFlags(f, "the hub")
	f.StringVarP(&o.namespace, "namespace", "n", "", "namespace of the bindings, placements, works, add-ons or FederatedLearnings to list (default: the kubeconfig context's namespace)")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "list bindings, placements, works, add-ons or FederatedLearnings in every namespace")
	f.StringVarP(&o.cluster, "cluster", "c", "", "list the works or add-ons of this managed cluster (those in the namespace named after it)")
	f.StringVarP(&o.output, "output", "o", "", "output format: yaml, json, or wide (a table with more columns, for "+wideNames()+"); a table when empty")
	return cmd
}

// validate checks the arguments and flags before anything reaches the hub, and returns the kind
// to list.
func (o options) validate(args []string) (resourceType, error) {
	if len(args) != 1 {
		return resourceType{}, fmt.Errorf("flotilla get takes one resource, got %d arguments: name one of %s", len(args), resourceNames())
	}
	r, err := lookupResource(args[0])
	if err != nil {
		return resourceType{}, err
	}
	switch o.output {
	case "", "yaml", "json":
	case "wide":
		if r.printWideTable == nil {
			return resourceType{}, fmt.Errorf("--output (-o) %q is not supported for %s: use -o yaml or -o json, or leave it out for a table (-o wide is for %s)", o.output, r.name, wideNames())
		}
	default:
		return resourceType{}, fmt.Errorf("--output (-o) %q is not supported: use -o yaml or -o json, -o wide for %s, or leave it out for a table", o.output, wideNames())
	}
	if o.cluster != "" {
		switch {
		case !r.byCluster:
			return resourceType{}, fmt.Errorf("--cluster (-c) %q: %s are not kept per cluster; leave -c out (it selects the works or add-ons of a cluster)", o.cluster, r.name)
		case o.allNamespaces:
			return resourceType{}, fmt.Errorf("--cluster (-c) %q and --all-namespaces (-A) contradict each other: give -c for one cluster's %s, -A for every cluster's", o.cluster, r.name)
		case o.namespace != "" && o.namespace != o.cluster:
			return resourceType{}, fmt.Errorf("--cluster (-c) %q and --namespace (-n) %q contradict each other: a cluster's %s are in the namespace named after it; give only -c", o.cluster, o.namespace, r.name)
		}
	}
	return r, nil
}

// run lists r on the hub and prints it.
func run(ctx context.Context, io streams.IO, clk clock.PassiveClock, newClient kubeflags.ReaderFunc, o options, r resourceType) error {
	c, hub, err := newClient(o.kube)
	if err != nil {
		return err
	}
	var namespace string
	var opts []client.ListOption
	if r.namespaced && !o.allNamespaces {
		namespace = o.namespace
		if o.cluster != "" {
			namespace = o.cluster
		}
		if namespace == "" {
			namespace = hub.Namespace
		}
		opts = append(opts, client.InNamespace(namespace))
	}
	list := r.newList()
	if err := c.List(ctx, list, opts...); err != nil {
		if meta.IsNoMatchError(err) {
			return fmt.Errorf("the hub of kubeconfig %s does not serve %s: %w; install the CRDs with `%s`",
				hub.Source, r.name, err, strings.TrimSpace("flotilla install crds "+o.kube.Args()))
		}
		return fmt.Errorf("listing %s on the hub of kubeconfig %s: %w", r.name, hub.Source, err)
	}
	if err := sortByNamespaceAndName(list); err != nil {
		return err
	}
	if o.output == "yaml" || o.output == "json" {
		return printObjects(io.Out, list, o.output)
	}
	if meta.LenList(list) == 0 {
		// Like kubectl, on stderr, so a script reading the table reads nothing.
		msg := "No resources found"
		if namespace != "" {
			msg += " in " + namespace + " namespace"
		}
		_, err := fmt.Fprintln(io.ErrOut, msg+".")
		return err
	}
	var related client.ObjectList
	if r.related != nil {
		related = r.related()
		if err := c.List(ctx, related); err != nil {
			related = nil // an older hub, or a user who may not read them: the table does without
		}
	}
	table := r.printTable
	if o.output == "wide" {
		table = r.printWideTable
	}
	return table(io.Out, list, related, clk, r.namespaced && o.allNamespaces)
}

// sortByNamespaceAndName orders list as the API server does, so the output does not depend on
// the client's order.
func sortByNamespaceAndName(list client.ObjectList) error {
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	keys := make(map[any]string, len(items))
	for _, item := range items {
		m, err := meta.Accessor(item)
		if err != nil {
			return err
		}
		keys[item] = m.GetNamespace() + "/" + m.GetName()
	}
	sort.SliceStable(items, func(i, j int) bool { return keys[items[i]] < keys[items[j]] })
	return meta.SetList(list, items)
}
