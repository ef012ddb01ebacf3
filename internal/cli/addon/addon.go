package addon

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
)

// ClientFunc returns a client of the hub the flags name.
type ClientFunc func(f kubeflags.Flags) (client.Client, *kubeflags.Loaded, error)

// hubClient is ClientFunc for a real hub.
func hubClient(f kubeflags.Flags) (client.Client, *kubeflags.Loaded, error) {
	hub, err := f.Load()
	if err != nil {
		return nil, nil, err
	}
	c, err := client.New(hub.Config, client.Options{Scheme: scheme.Scheme})
	return c, hub, err
}

// NewCommand returns `flotilla addon`.
func NewCommand(io streams.IO) *cobra.Command { return newCommand(io, hubClient) }

type options struct {
	kube      kubeflags.Flags
	clusters  []string
	namespace string
}

func newCommand(io streams.IO, newClient ClientFunc) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "addon",
		Short: "Enable or disable an add-on on managed clusters",
	}
	var o options
	enable := &cobra.Command{
		Use:   "enable NAME --clusters CLUSTER[,CLUSTER...]",
		Short: "Enable an add-on on clusters: create its ManagedClusterAddOn in each cluster's namespace",
		Example: `  flotilla addon enable gpu-score --clusters gpu-east,gpu-west
  flotilla addon enable kueue --clusters gpu-east --namespace kueue-system`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), io, newClient, args[0], enableOne)
		},
	}
	disable := &cobra.Command{
		Use:     "disable NAME --clusters CLUSTER[,CLUSTER...]",
		Short:   "Disable an add-on on clusters: delete the ManagedClusterAddOns a user made",
		Example: `  flotilla addon disable gpu-score --clusters gpu-west`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), io, newClient, args[0], disableOne)
		},
	}
	for _, c := range []*cobra.Command{enable, disable} {
		o.kube.AddFlags(c.Flags(), "the hub")
		c.Flags().StringSliceVar(&o.clusters, "clusters", nil, "the managed clusters, comma-separated (required)")
	}
	enable.Flags().StringVar(&o.namespace, "namespace", "", "the namespace on the cluster to install the add-on's agent in (spec.installNamespace; default: the add-on's)")
	cmd.AddCommand(enable, disable)
	return cmd
}

// oneFunc enables or disables the add-on on one cluster and says what it did.
type oneFunc func(ctx context.Context, c client.Client, name, cluster, namespace string) (string, error)

func (o options) run(ctx context.Context, io streams.IO, newClient ClientFunc, name string, one oneFunc) error {
	if len(o.clusters) == 0 {
		return errors.New("--clusters is required: name the managed clusters, e.g. --clusters gpu-east,gpu-west")
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("add-on name %q is not a valid object name: %s", name, strings.Join(errs, "; "))
	}
	if o.namespace != "" {
		if errs := validation.IsDNS1123Label(o.namespace); len(errs) > 0 {
			return fmt.Errorf("--namespace %q is not a valid namespace name: %s", o.namespace, strings.Join(errs, "; "))
		}
	}
	c, hub, err := newClient(o.kube)
	if err != nil {
		return err
	}
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, cma); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("ClusterManagementAddOn %s not found on the hub of kubeconfig %s: install the add-on first (its ClusterManagementAddOn), then enable it on clusters", name, hub.Source)
		}
		return fmt.Errorf("reading ClusterManagementAddOn %s on the hub of kubeconfig %s: %w", name, hub.Source, err)
	}
	var failed []string
	for _, cluster := range dedupe(o.clusters) {
		msg, err := one(ctx, c, name, cluster, o.namespace)
		if err != nil {
			failed = append(failed, cluster)
			if _, werr := fmt.Fprintf(io.ErrOut, "%s: %v\n", cluster, err); werr != nil {
				return werr
			}
			continue
		}
		if _, err := fmt.Fprintf(io.Out, "%s: %s\n", cluster, msg); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("add-on %s: %d of %d clusters failed: %s", name, len(failed), len(dedupe(o.clusters)), strings.Join(failed, ", "))
	}
	return nil
}

func enableOne(ctx context.Context, c client.Client, name, cluster, namespace string) (string, error) {
	if err := c.Get(ctx, client.ObjectKey{Name: cluster}, &clusterv1.ManagedCluster{}); err != nil {
		if apierrors.IsNotFound(err) {
			return "", fmt.Errorf("ManagedCluster %s not found: check the name with `flotilla get clusters`", cluster)
		}
		return "", err
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name},
		Spec:       addonv1alpha1.ManagedClusterAddOnSpec{InstallNamespace: namespace},
	}
	err := c.Create(ctx, mca)
	if apierrors.IsAlreadyExists(err) {
		return "already enabled (ManagedClusterAddOn " + cluster + "/" + name + " exists)", nil
	}
	if err != nil {
		return "", fmt.Errorf("creating ManagedClusterAddOn %s/%s: %w", cluster, name, err)
	}
	return "enabled (ManagedClusterAddOn " + cluster + "/" + name + " created)", nil
}

func disableOne(ctx context.Context, c client.Client, name, cluster, _ string) (string, error) {
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, mca)
	if apierrors.IsNotFound(err) {
		return "not enabled (no ManagedClusterAddOn " + cluster + "/" + name + ")", nil
	}
	if err != nil {
		return "", err
	}
	if ref := metav1.GetControllerOf(mca); ref != nil && ref.Kind == "ClusterManagementAddOn" {
		return "", fmt.Errorf("ManagedClusterAddOn %s/%s was installed by ClusterManagementAddOn %s's installStrategy, which would install it again: "+
			"change the placements in its spec.installStrategy so they leave out cluster %s", cluster, name, ref.Name, cluster)
	}
	uid := mca.UID
	if err := c.Delete(ctx, mca, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return "", fmt.Errorf("deleting ManagedClusterAddOn %s/%s: %w", cluster, name, err)
	}
	return "disabled (ManagedClusterAddOn " + cluster + "/" + name + " deleted)", nil
}

// dedupe returns the names sorted, each once, without empty ones.
func dedupe(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
