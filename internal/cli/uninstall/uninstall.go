package uninstall

import (
	"context"
	"fmt"
	"strings"

	"github.com/flotilla/flotilla/config/rbac"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/flotilla/flotilla/charts"
	agentregistration "github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/contract/wellknown"
	"github.com/flotilla/flotilla/internal/install"
)

// parts are what can be uninstalled: the chart and its default namespace.
var parts = map[string]struct{ chart, namespace string }{
	"hub":   {charts.Hub, "open-cluster-management-hub"},
	"agent": {charts.Agent, agentregistration.DefaultNamespace},
}

// NewCommand returns `flotilla uninstall`.
func NewCommand(io streams.IO) *cobra.Command {
	var kube kubeflags.Flags
	var namespace string
	cmd := &cobra.Command{
		Use:   "uninstall hub|agent",
		Short: "Remove what `flotilla init --install` (hub) or `flotilla join --install` (agent) installed",
		Long: "Deletes every object of the flotilla-hub or flotilla-agent chart that carries Flotilla's labels of that\n" +
			"install; for the hub also the webhook configuration it wrote and the bootstrap identity `flotilla init`\n" +
			"made, when labeled as Flotilla's. Objects of the same names that Flotilla did not install are kept and\n" +
			"named. The CRDs stay (deleting them would delete every ManagedCluster, Placement and ManifestWork), as\n" +
			"Helm keeps them; the namespace stays too.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			part, ok := parts[args[0]]
			if !ok {
				return fmt.Errorf("cannot uninstall %q: give hub or agent", args[0])
			}
			if namespace == "" {
				namespace = part.namespace
			}
			loaded, err := kube.Load()
			if err != nil {
				return err
			}
			kept, err := uninstall(cmd.Context(), io, loaded.Config, args[0], part.chart, namespace)
			if err != nil {
				return err
			}
			if len(kept) > 0 {
				_, err = fmt.Fprintf(io.Out, "Kept, as Flotilla did not install them: %s\n", strings.Join(kept, ", "))
				return err
			}
			_, err = fmt.Fprintf(io.Out, "Flotilla's %s is uninstalled from namespace %s; its CRDs stay.\n", args[0], namespace)
			return err
		},
	}
	kube.AddFlags(cmd.Flags(), "the cluster to remove it from")
	cmd.Flags().StringVar(&namespace, "namespace", "", "the namespace it was installed in (default: open-cluster-management-hub for the hub, "+agentregistration.DefaultNamespace+" for the agent)")
	return cmd
}

func uninstall(ctx context.Context, io streams.IO, cfg *rest.Config, what, chart, ns string) ([]string, error) {
	rel := charts.Release{Name: chart, Namespace: ns}
	// Render every optional part, so that objects of any earlier values are found; Remove skips
	// what does not exist.
	variants := []map[string]any{nil}
	if what == "hub" {
		variants = append(variants, map[string]any{"kueue": map[string]any{"dispatcher": true}, "webhook": map[string]any{"certManager": map[string]any{"enabled": true}}})
	} else {
		variants[0] = map[string]any{"clusterName": "uninstall", "bootstrapKubeconfig": "uninstall"}
		variants = append(variants, map[string]any{"clusterName": "uninstall", "bootstrapKubeconfig": "uninstall",
			"work": map[string]any{"mode": "Restricted"}})
	}
	var kept []string
	for _, v := range variants {
		k, err := install.UninstallChart(ctx, cfg, install.Chart{Chart: chart, Release: rel, Values: v, Out: io.Out})
		if err != nil {
			return nil, err
		}
		kept = appendNew(kept, k...)
	}
	if what != "hub" {
		return kept, nil
	}
	// What the hub and `flotilla init` made beside the chart.
	hubMade := []*unstructured.Unstructured{
		object("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "", wellknown.HubWebhookConfiguration),
		object("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "open-cluster-management:bootstrap"),
		object("rbac.authorization.k8s.io/v1", "ClusterRole", "", "open-cluster-management:bootstrap"),
		object("rbac.authorization.k8s.io/v1", "ClusterRole", "", rbac.ManagedServiceAccountAgentName),
		object("v1", "ServiceAccount", "open-cluster-management", "cluster-bootstrap"),
	}
	k, err := install.RemoveLabeled(ctx, cfg, hubMade, io.Out)
	return appendNew(kept, k...), err
}

func object(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func appendNew(list []string, more ...string) []string {
	for _, m := range more {
		if !contains(list, m) {
			list = append(list, m)
		}
	}
	return list
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}
