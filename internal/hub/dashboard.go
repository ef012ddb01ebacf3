package hub

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
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
// (which kinds the API server serves) and the GPU history (totals, to viewers who may read every
// figure in them), never objects.
type dashboardServer struct {
	handler          http.Handler
	address, certDir string
	clock            clock.PassiveClock
	logouts          *dashboard.ConfigMapRevocations
}

var _ manager.LeaderElectionRunnable = (*dashboardServer)(nil)

func setupDashboard(mgr ctrl.Manager, cfg *rest.Config, opts Options, clk clock.WithTicker, kueueServed bool) error {
	if _, _, err := net.SplitHostPort(opts.DashboardAddress); err != nil {
		return fmt.Errorf("dashboard address %q: %w; give host:port, such as 0.0.0.0:9445", opts.DashboardAddress, err)
	}
	sessions, err := dashboardSessions(opts.DashboardCertDir, clk)
	if err != nil {
		return err
	}
	// Logouts are recorded where every replica reads them: the hub's namespace.
	cs, err := kubernetes.NewForConfigAndClient(cfg, mgr.GetHTTPClient())
	if err != nil {
		return err
	}
	logouts := dashboard.NewConfigMapRevocations(cs, opts.LeaderElectionNamespace, clk)
	sessions.ShareRevocations(logouts)
	// The history is the one thing the dashboard reads with the hub's identity: fleet totals and
	// FleetQueue shares from the hub's cache, shown only to viewers who may read every figure they
	// add up. Without Kueue at start the hub watches none of its kinds, and the history reads none.
	history := dashboard.NewHistory(mgr.GetClient(), clk, dashboard.DefaultHistoryInterval, dashboard.DefaultHistorySamples)
	history.Queues = kueueServed
	if err := mgr.Add(history); err != nil {
		return err
	}
	h := dashboard.New(dashboard.Options{Identity: dashboard.BearerTokenFor(cfg, sessions), Mapper: mgr.GetRESTMapper(), Clock: clk, Assets: opts.DashboardAssets, History: history})
	return mgr.Add(&dashboardServer{handler: h, address: opts.DashboardAddress, certDir: opts.DashboardCertDir, clock: clk, logouts: logouts})
}

// dashboardSessions seals viewers' sessions with the key in certDir's session.key, which every
// replica shares (the chart puts it there), or, without one, with a key made at start: sessions
// then open only on this replica and end when it stops.
func dashboardSessions(certDir string, clk clock.PassiveClock) (*dashboard.Sessions, error) {
	if certDir != "" {
		key, err := os.ReadFile(filepath.Join(certDir, dashboard.SessionKeyFile))
		switch {
		case err == nil:
			s, err := dashboard.NewSessions(key, clk)
			if err != nil {
				return nil, fmt.Errorf("--dashboard-cert-dir %s: %w", certDir, err)
			}
			return s, nil
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("--dashboard-cert-dir %s: reading the session key: %w", certDir, err)
		}
	}
	return dashboard.RandomSessions(clk)
}

func (s *dashboardServer) NeedLeaderElection() bool { return false }

// Dashboard logouts are kept in a ConfigMap of the hub's namespace (dashboard.LogoutsConfigMap),
// which every replica watches.
// Creating cannot be limited to a name; reading and updating are limited to that one. (The
// dynamic-scoring controller's ClusterRole rules cover every ConfigMap today, so this Role is
// what the dashboard needs, not yet a limit the hub's identity keeps.)
// +kubebuilder:rbac:groups="",namespace=open-cluster-management-hub,resources=configmaps,verbs=create
// +kubebuilder:rbac:groups="",namespace=open-cluster-management-hub,resources=configmaps,resourceNames=flotilla-dashboard-logouts,verbs=get;list;watch;update

func (s *dashboardServer) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("dashboard")
	// A replica serves only once it knows every logout so far: before, it would open cookies
	// logged out on another replica.
	if err := s.logouts.Start(ctx); err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
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
