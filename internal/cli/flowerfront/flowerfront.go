package flowerfront

import (
	"github.com/spf13/cobra"

	"github.com/flotilla/flotilla/internal/cli/streams"
	front "github.com/flotilla/flotilla/internal/hub/flowerfront"
)

// NewCommand returns `flotilla flower-front`.
func NewCommand(_ streams.IO) *cobra.Command {
	var o front.Options
	cmd := &cobra.Command{
		Use:   "flower-front",
		Short: "Serve a Flower SuperLink to the network, its Control API to the hub only",
		Long: "Runs in a federation's Flower SuperLink pod, in front of the SuperLink, which listens on the pod's loopback\n" +
			"(--upstream). It serves HTTPS (--listen, --tls-cert-file, --tls-key-file) and forwards the Fleet API\n" +
			"(/v1/fleet/, SuperNodes), the Runtime API (/v1/runtime/, the ServerApp) and /health, which Flower\n" +
			"authenticates itself. The Control API (/v1/control/) authenticates no one in open-source Flower, so it is\n" +
			"forwarded only with the hub's token (Authorization: Bearer, the content of --control-token-file) and refused\n" +
			"with 403 otherwise; to run flwr against the SuperLink yourself, `kubectl port-forward` to the pod.\n" +
			"Everything else is 404. It stops on SIGTERM or SIGINT, letting requests in flight finish for a few seconds.",
		Example: `  flotilla flower-front --listen :9093 --upstream http://127.0.0.1:9091 \
    --tls-cert-file /tls/tls.crt --tls-key-file /tls/tls.key --control-token-file /token/token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// cmd/flotilla executes the command with a context that ends on SIGTERM or SIGINT.
			return front.Run(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Listen, front.FlagListen, "", "HOST:PORT to serve HTTPS on, e.g. :9093")
	f.StringVar(&o.Upstream, front.FlagUpstream, "", "the SuperLink's plain-HTTP address on the pod's loopback, http://127.0.0.1:PORT (its --host and --port)")
	f.StringVar(&o.CertFile, front.FlagCertFile, "", "PEM certificate to serve, reloaded when the file changes")
	f.StringVar(&o.KeyFile, front.FlagKeyFile, "", "PEM private key of --"+front.FlagCertFile)
	f.StringVar(&o.ControlTokenFile, front.FlagControlTokenFile, "",
		"file holding the hub's bearer token, the only credential the Control API is forwarded with (read at start; a trailing newline is ignored)")
	return cmd
}
