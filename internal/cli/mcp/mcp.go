package mcp

import (
	"context"
	"fmt"
	"net"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/hub/mcpserver"
	"github.com/flotilla/flotilla/internal/version"
)

type options struct {
	kube        kubeflags.Flags
	allowWrites bool
	http        string
}

// NewCommand returns `flotilla mcp`.
func NewCommand(io streams.IO, clk clock.PassiveClock) *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:   "mcp [--http ADDRESS] [--allow-writes]",
		Short: "Serve the fleet's state to AI assistants over the Model Context Protocol",
		Long: "Serves the Model Context Protocol (MCP) so that an assistant can read the fleet: clusters, GPU capacity,\n" +
			"placements with their decisions and explanations, ManifestWorks and the hub's Kueue Workloads, and\n" +
			"simulate placements. Every call reads the hub with the identity of the kubeconfig (--kubeconfig,\n" +
			"--context), so the hub's RBAC decides what the assistant sees.\n\n" +
			"Over stdio by default: an assistant starts the command and talks on its standard input and output.\n" +
			"With --http ADDRESS, over MCP's streamable HTTP transport on that loopback address; the first line of\n" +
			"standard output is the URL to give the assistant.\n\n" +
			"--allow-writes adds patch_placement and set_addon_placement_score; without it they do not exist.\n" +
			"See docs/mcp.md.",
		Example: `  flotilla mcp --kubeconfig "$(flotilla dev kubeconfig hub)"
  flotilla mcp --http 127.0.0.1:0 --context hub
  flotilla mcp --allow-writes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return run(cmd.Context(), io, clk, o)
		},
	}
	o.kube.AddFlags(cmd.Flags(), "the hub")
	cmd.Flags().BoolVar(&o.allowWrites, "allow-writes", false, "add the tools that change the hub (patch_placement, set_addon_placement_score)")
	cmd.Flags().StringVar(&o.http, "http", "", "serve streamable HTTP on this loopback HOST:PORT (127.0.0.1:0 picks a free port) instead of stdio, and print its URL first")
	return cmd
}

func run(ctx context.Context, io streams.IO, clk clock.PassiveClock, o options) error {
	if o.http != "" {
		if err := mcpserver.CheckLoopback(o.http); err != nil {
			return err
		}
	}
	hub, err := o.kube.Load()
	if err != nil {
		return err
	}
	srv, err := newServer(hub, clk, o.allowWrites)
	if err != nil {
		return err
	}
	if o.http == "" {
		return mcpserver.ServeStdio(ctx, srv, io.In, io.Out)
	}
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", o.http)
	if err != nil {
		return fmt.Errorf("--http %s: %w: give another port, or 127.0.0.1:0 for a free one", o.http, err)
	}
	var printErr error
	err = mcpserver.ServeHTTP(ctx, srv, l, func(url string) {
		_, printErr = fmt.Fprintln(io.Out, url)
	})
	if printErr != nil {
		return printErr
	}
	return err
}

// newServer builds the MCP server with clients of the hub of kubeconfig hub.
func newServer(hub *kubeflags.Loaded, clk clock.PassiveClock, allowWrites bool) (*sdkmcp.Server, error) {
	cfg := rest.CopyConfig(hub.Config)
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, fmt.Errorf("creating a client of the hub of kubeconfig %s: %w", hub.Source, err)
	}
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating a discovery client of the hub of kubeconfig %s: %w", hub.Source, err)
	}
	return mcpserver.New(mcpserver.Options{Client: c, Discovery: d, Clock: clk, Namespace: hub.Namespace,
		AllowWrites: allowWrites, Version: version.Version}), nil
}
