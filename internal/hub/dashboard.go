package hub

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/flotilla/flotilla/internal/hub/dashboard"
	"github.com/flotilla/flotilla/internal/hub/explain"
)

// dashboardServer serves the web dashboard over HTTPS to viewers who log in with a bearer token
// (internal/hub/dashboard's BearerToken): every replica, no leader needed. Each viewer's requests
// read the API server with the viewer's token only; the hub's identity serves only discovery
// (which kinds the API server serves), never objects.
type dashboardServer struct {
	handler          http.Handler
	address, certDir string
	clock            clock.PassiveClock
}

var _ manager.LeaderElectionRunnable = (*dashboardServer)(nil)

func setupDashboard(mgr ctrl.Manager, cfg *rest.Config, opts Options, clk clock.WithTicker) error {
	if _, _, err := net.SplitHostPort(opts.DashboardAddress); err != nil {
		return fmt.Errorf("dashboard address %q: %w; give host:port, such as 0.0.0.0:9445", opts.DashboardAddress, err)
	}
	h := dashboard.New(dashboard.Options{Identity: dashboard.BearerTokenFor(cfg), Mapper: mgr.GetRESTMapper(), Clock: clk, Assets: opts.DashboardAssets})
	return mgr.Add(&dashboardServer{handler: h, address: opts.DashboardAddress, certDir: opts.DashboardCertDir, clock: clk})
}

func (s *dashboardServer) NeedLeaderElection() bool { return false }

func (s *dashboardServer) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("dashboard")
	cfg, err := explain.ServingTLS(ctx, s.certDir, s.address, s.clock.Now())
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", s.address)
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	srv := &http.Server{Handler: s.handler, TLSConfig: cfg, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return log.IntoContext(context.Background(), logger) }}
	logger.Info("serving the dashboard", "url", "https://"+l.Addr().String()+"/")
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.ServeTLS(l, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-done
	return nil
}
