package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/hub/dashboard"
	dashboardassets "github.com/flotilla/flotilla/web/dashboard"
)

// DefaultAddress is where the dashboard listens unless told otherwise.
const DefaultAddress = "127.0.0.1:8090"

type options struct {
	kube            kubeflags.Flags
	address         string
	historyInterval time.Duration
}

// NewCommand returns `flotilla dashboard`.
func NewCommand(io streams.IO, clk clock.WithTicker) *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:   "dashboard [--address HOST:PORT]",
		Short: "Serve the fleet's web dashboard on loopback, with your kubeconfig's identity",
		Long: "Serves Flotilla's read-only web dashboard (fleet, GPUs, placements with explanations and what-ifs, works\n" +
			"and rollouts, add-ons, jobs) on a loopback address, and prints its URL on the first line of standard\n" +
			"output. As with `kubectl proxy`, every request reads the hub with the identity of the kubeconfig\n" +
			"(--kubeconfig, --context), so the hub's RBAC decides what the page shows; anyone who can reach the\n" +
			"address acts as you, so it listens on loopback only and accepts only loopback Host names.\n" +
			"The hub can serve the dashboard to other viewers behind their own tokens: see docs/dashboard.md.",
		Example: `  flotilla dashboard --kubeconfig "$(flotilla dev kubeconfig hub)"
  flotilla dashboard --context hub --address 127.0.0.1:0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return run(cmd.Context(), io, clk, o)
		},
	}
	o.kube.AddFlags(cmd.Flags(), "the hub")
	cmd.Flags().StringVar(&o.address, "address", DefaultAddress, "loopback HOST:PORT to listen on (127.0.0.1:0 picks a free port)")
	cmd.Flags().DurationVar(&o.historyInterval, "gpu-history-interval", dashboard.DefaultHistoryInterval,
		fmt.Sprintf("how often the GPU view's free-GPUs-over-time chart samples the fleet (it keeps the last %d samples)", dashboard.DefaultHistorySamples))
	return cmd
}

// CheckLoopback refuses an --address that is not on loopback: the server acts with the
// kubeconfig's identity and authenticates no one.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--address %q is not HOST:PORT (%v): give a loopback address such as 127.0.0.1:8090, or 127.0.0.1:0 for a free port", addr, err)
	}
	if !dashboard.Loopback(host) {
		return fmt.Errorf("--address %q is not a loopback address: flotilla dashboard acts with your kubeconfig identity and authenticates no one, "+
			"so it listens on loopback only; give 127.0.0.1:PORT, [::1]:PORT or localhost:PORT, reach it from elsewhere through ssh -L, "+
			"or let the hub serve the dashboard behind viewers' tokens (docs/dashboard.md)", addr)
	}
	return nil
}

func run(ctx context.Context, io streams.IO, clk clock.WithTicker, o options) error {
	if err := CheckLoopback(o.address); err != nil {
		return err
	}
	if o.historyInterval < time.Second {
		return fmt.Errorf("--gpu-history-interval %s is under a second: give 1s or more (default %s)", o.historyInterval, dashboard.DefaultHistoryInterval)
	}
	hub, err := o.kube.Load()
	if err != nil {
		return err
	}
	h, history, err := NewHandler(hub.Config, clk, o.historyInterval)
	if err != nil {
		return fmt.Errorf("the hub of kubeconfig %s: %w", hub.Source, err)
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = history.Start(ctx) }()
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", o.address)
	if err != nil {
		return fmt.Errorf("--address %s: %w: give another port, or 127.0.0.1:0 for a free one", o.address, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if _, err := fmt.Fprintf(io.Out, "http://%s/\n", l.Addr()); err != nil {
		_ = l.Close()
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// NewHandler is the dashboard of the hub of cfg, read with cfg's identity, for loopback Hosts
// only, and its GPU history (sampling every interval, also with cfg's identity), which the caller
// starts.
func NewHandler(cfg *rest.Config, clk clock.WithTicker, interval time.Duration) (http.Handler, *dashboard.History, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return nil, nil, err
	}
	c, err := client.New(cfg, client.Options{HTTPClient: hc, Scheme: scheme.Scheme, Mapper: mapper})
	if err != nil {
		return nil, nil, err
	}
	history := dashboard.NewHistory(c, clk, interval, dashboard.DefaultHistorySamples)
	return dashboard.New(dashboard.Options{Identity: dashboard.Kubeconfig{REST: cfg}, Mapper: mapper, Clock: clk,
		Assets: dashboardassets.FS(), AllowedHost: dashboard.Loopback, History: history}), history, nil
}
