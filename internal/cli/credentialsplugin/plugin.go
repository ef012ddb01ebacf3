package credentialsplugin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
)

// NewCommand returns `flotilla credentials-plugin`.
func NewCommand(ios streams.IO, clk clock.PassiveClock) *cobra.Command {
	var kube kubeflags.Flags
	var msa string
	cmd := &cobra.Command{
		Use:   "credentials-plugin --managed-serviceaccount NAME",
		Short: "client-go exec plugin: a ManagedServiceAccount's token for the cluster a ClusterProfile consumer asks about",
		Long: "A credentials plugin for ClusterProfile consumers (KEP-5339). Configure it as the consumer's provider\n" +
			"open-cluster-management with provideClusterInfo: true, for example\n\n" +
			"  {\"providers\": [{\"name\": \"open-cluster-management\", \"execConfig\": {\"apiVersion\": \"client.authentication.k8s.io/v1\",\n" +
			"    \"command\": \"flotilla\", \"args\": [\"credentials-plugin\", \"--managed-serviceaccount\", \"argocd\"],\n" +
			"    \"provideClusterInfo\": true, \"interactiveMode\": \"Never\"}}]}\n\n" +
			"It reads the cluster name from " + ExecInfoEnv + " (the ClusterProfile's exec extension), then, on the hub and as\n" +
			"the consumer's own identity, the cluster's ManagedCluster, ManagedServiceAccount <cluster>/NAME and its token\n" +
			"Secret, and prints an ExecCredential with the token. The identity needs get on managedclusters,\n" +
			"on managedserviceaccounts in the cluster's namespace, and on the Secret (docs/managed-serviceaccounts.md).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if msa == "" {
				return fmt.Errorf("--managed-serviceaccount is required: the name of the ManagedServiceAccount whose token to hand out")
			}
			cluster, version, err := clusterName(os.Getenv(ExecInfoEnv))
			if err != nil {
				return err
			}
			hub, err := kube.Load()
			if err != nil {
				return err
			}
			c, err := client.New(hub.Config, client.Options{Scheme: scheme.Scheme})
			if err != nil {
				return err
			}
			token, again, err := read(cmd.Context(), c, cluster, msa, clk.Now())
			if err != nil {
				return err
			}
			return json.NewEncoder(ios.Out).Encode(map[string]any{
				"apiVersion": version, "kind": "ExecCredential",
				"status": map[string]any{"token": token, "expirationTimestamp": again.UTC().Format(time.RFC3339)},
			})
		},
	}
	kube.AddFlags(cmd.Flags(), "the hub cluster, as the consumer's identity")
	cmd.Flags().StringVar(&msa, "managed-serviceaccount", "", "name of the ManagedServiceAccount whose token to hand out (in the namespace of the cluster asked about)")
	return cmd
}

// read reads what credential decides on, as c's identity.
func read(ctx context.Context, c client.Client, cluster, name string, now time.Time) (string, time.Time, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
		return "", time.Time{}, readErr(fmt.Sprintf("ManagedCluster %s", cluster), "get on managedclusters", err)
	}
	m := &authv1beta1.ManagedServiceAccount{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, m); err != nil {
		return "", time.Time{}, readErr(fmt.Sprintf("ManagedServiceAccount %s/%s", cluster, name), "get on managedserviceaccounts in namespace "+cluster, err)
	}
	secret := name
	if m.Status.TokenSecretRef != nil {
		secret = m.Status.TokenSecretRef.Name
	}
	s := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: secret}, s); err != nil {
		return "", time.Time{}, readErr(fmt.Sprintf("Secret %s/%s", cluster, secret), "get on secrets named "+secret+" in namespace "+cluster, err)
	}
	return credential(mc, m, s, now)
}

// readErr explains a failed read: what is missing, or which right the identity lacks.
func readErr(what, right string, err error) error {
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s does not exist on the hub: %w", what, err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("this identity may not read %s on the hub, so it gets no token for the cluster: an administrator of the hub grants %s: %w", what, right, err)
	}
	return fmt.Errorf("reading %s on the hub: %w", what, err)
}
