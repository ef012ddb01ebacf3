package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla/flotilla/internal/agent/addon"
	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/agent/builtin/configpolicy"
	"github.com/flotilla/flotilla/internal/agent/builtin/dynamicscoring"
	"github.com/flotilla/flotilla/internal/agent/builtin/kueuequeues"
	"github.com/flotilla/flotilla/internal/agent/builtin/managedserviceaccount"
	"github.com/flotilla/flotilla/internal/agent/builtin/multikueueworker"
	"github.com/flotilla/flotilla/internal/agent/builtin/policyframework"
	"github.com/flotilla/flotilla/internal/agent/builtin/resourceusage"
	"github.com/flotilla/flotilla/internal/agent/fence"
	"github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/agent/work"
)

// Options configures the agent.
type Options struct {
	// ClusterName is the cluster's name on the hub, a DNS label, and its namespace there.
	ClusterName string
	// AgentID tells this agent's certificates from other agents' of the same cluster; the host
	// name when empty.
	AgentID string
	// Bootstrap reaches the hub with the bootstrap identity, which may only register
	// (registration.LoadBootstrap reads the one `flotilla join` stored on the cluster).
	Bootstrap *rest.Config
	// Spoke reaches this (the managed) cluster.
	Spoke *rest.Config
	// ExternalServerURLs are the addresses at which the hub and its consumers reach this
	// cluster's API server, written into the ManagedCluster the agent creates
	// (registration.Options.ExternalServerURLs).
	ExternalServerURLs []string
	// QPS and Burst limit the requests of the agent's busiest clients: the work agent's, to the
	// hub and (unless Spoke sets a rate) to the spoke, and the add-on agent's watch of the hub
	// (registration.DefaultQPS and DefaultBurst say why those defaults; they apply when zero).
	// The registration agent's clients keep client-go's rate, and the fence's its own
	// (fence.SpokeQPS).
	QPS   float32
	Burst int
	// CertificateLifetime asks the signer for this lifetime, for the agent's hub certificate and
	// the add-ons'; zero takes the signer's default.
	CertificateLifetime time.Duration
	// DisableDefaultAddOnNamespace: do not create addon.DefaultInstallNamespace on the spoke
	// (addon.Options).
	DisableDefaultAddOnNamespace bool
	// WorkExecutor, NAMESPACE/NAME of a ServiceAccount, applies, reads and removes the manifests
	// of ManifestWorks without an executor by impersonation (the restricted mode,
	// work.Options.DefaultExecutor); empty: the agent's own identity does, as OCM's work agent.
	WorkExecutor string
	// PolicyExecutor, NAMESPACE/NAME of a ServiceAccount, reads and writes the objects that the
	// policies' object templates name (the built-in add-on config-policy-controller,
	// configpolicy.AddOn.Executor); empty: the agent's own identity does.
	PolicyExecutor string
	// DynamicScoringAllowLocal lets the built-in add-on dynamic-scoring reach loopback and
	// link-local addresses (local fleets, tests); cloud metadata addresses stay refused.
	DynamicScoringAllowLocal bool
	// Clock is every part's clock; the real one when nil.
	Clock clock.WithTicker
	// Log is where the parts log, each under its name: agent (registration), fence, work, addon
	// and builtin.
	Log logr.Logger
}

// DefaultOptions are `flotilla agent`'s defaults; ClusterName, Bootstrap and Spoke have none.
func DefaultOptions() Options {
	return Options{
		QPS: registration.DefaultQPS, Burst: registration.DefaultBurst,
		Clock: clock.RealClock{}, Log: ctrl.Log,
	}
}

// ValidateExecutor checks an executor (of works or of policies), NAMESPACE/NAME of a
// ServiceAccount. The error names field (a flag such as --work-executor) and the value.
func ValidateExecutor(field, sa string) error {
	if ns, name, ok := strings.Cut(sa, "/"); !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("%s %q: give the ServiceAccount as NAMESPACE/NAME, such as open-cluster-management-agent/flotilla-work", field, sa)
	}
	return nil
}

// executorUser is the user name of the ServiceAccount NAMESPACE/NAME; "" for "".
func executorUser(sa string) string {
	if sa == "" {
		return ""
	}
	ns, name, _ := strings.Cut(sa, "/")
	return "system:serviceaccount:" + ns + ":" + name
}

// Agent is `flotilla agent`: the registration agent, the fence, the work agent and the add-on
// agent with the built-in add-ons, all acting on the hub with the hub credentials the
// registration agent keeps.
type Agent struct {
	opts         Options
	registration *registration.Agent
	fence        *fence.Fencer
	work         *work.Agent
	addOns       *addon.Agent
}

// New checks the options and assembles the agent; nothing talks to a server before Run.
func New(opts Options) (*Agent, error) {
	if opts.AgentID == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("the agent needs an agent id, and the host name to default it to: %w", err)
		}
		opts.AgentID = host
	}
	if opts.QPS < 0 || opts.Burst < 0 {
		return nil, fmt.Errorf("the agent's client rate (--kube-api-qps %g, --kube-api-burst %d) must not be negative; zero takes the defaults, %d and %d",
			opts.QPS, opts.Burst, registration.DefaultQPS, registration.DefaultBurst)
	}
	if opts.QPS == 0 {
		opts.QPS = registration.DefaultQPS
	}
	if opts.Burst == 0 {
		opts.Burst = registration.DefaultBurst
	}
	for _, e := range [][2]string{{"work executor", opts.WorkExecutor}, {"policy executor", opts.PolicyExecutor}} {
		if e[1] != "" {
			if err := ValidateExecutor(e[0], e[1]); err != nil {
				return nil, err
			}
		}
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	a := &Agent{opts: opts}
	var err error
	if a.registration, err = registration.New(registration.Options{
		ClusterName: opts.ClusterName, AgentID: opts.AgentID, Bootstrap: opts.Bootstrap, Spoke: opts.Spoke,
		ExternalServerURLs: opts.ExternalServerURLs, CertificateLifetime: opts.CertificateLifetime,
		Clock: opts.Clock, Log: opts.Log.WithName("agent"),
	}); err != nil {
		return nil, err
	}
	hub := a.registration.Hub()
	if a.fence, err = fence.New(fence.Options{
		ClusterName: opts.ClusterName, Agent: a.registration, Hub: hub, Spoke: opts.Spoke,
		Clock: opts.Clock, Log: opts.Log.WithName("fence"),
	}); err != nil {
		return nil, err
	}
	if a.work, err = work.New(work.Options{
		ClusterName: opts.ClusterName, AgentID: opts.AgentID, Hub: hub, Spoke: opts.Spoke,
		QPS: opts.QPS, Burst: opts.Burst,
		Fence: a.fence, DefaultExecutor: executorUser(opts.WorkExecutor),
		Clock: opts.Clock, Log: opts.Log.WithName("work"),
	}); err != nil {
		return nil, err
	}
	// The built-in add-ons' client of the spoke has the agent's rate unless its kubeconfig sets
	// one, as the work agent's has.
	builtInSpoke := rest.CopyConfig(opts.Spoke)
	if builtInSpoke.QPS == 0 {
		builtInSpoke.QPS, builtInSpoke.Burst = opts.QPS, opts.Burst
	}
	builtIns := builtin.NewManager(opts.ClusterName, builtInSpoke, opts.Clock, opts.Log.WithName("builtin"),
		resourceusage.AddOn{}, dynamicscoring.AddOn{AllowLocal: opts.DynamicScoringAllowLocal}, multikueueworker.AddOn{}, kueuequeues.AddOn{}, managedserviceaccount.AddOn{},
		policyframework.AddOn{}, configpolicy.AddOn{Executor: executorUser(opts.PolicyExecutor)})
	if a.addOns, err = addon.New(addon.Options{
		ClusterName: opts.ClusterName, AgentID: opts.AgentID, Hub: hub, Spoke: opts.Spoke,
		QPS: opts.QPS, Burst: opts.Burst,
		CertificateLifetime: opts.CertificateLifetime, DisableDefaultAddOnNamespace: opts.DisableDefaultAddOnNamespace,
		BuiltIns: builtIns,
		Clock:    opts.Clock, Log: opts.Log.WithName("addon"),
	}); err != nil {
		return nil, err
	}
	return a, nil
}

// Run runs the agent's parts together until ctx ends or one of them stops by itself, then stops
// the others, waits for them and returns: with the error of the part that stopped first, else
// with ctx's. The registration agent's loops and the fence's run side by side on the
// registration agent's runner (its clock, log and backoff); the work agent and the add-on agent
// (with the built-in add-ons) run beside them, with the credentials the registration agent keeps.
// None gives up on a failure: each logs it and tries again, so Run returns when ctx ends.
func (a *Agent) Run(ctx context.Context) error {
	return runAll(ctx, []part{
		{"the registration agent", func(ctx context.Context) error {
			return a.registration.Runner().Run(ctx, append(a.registration.Loops(), a.fence.Loop())...)
		}},
		{"the work agent", a.work.Run},
		{"the add-on agent", a.addOns.Run},
	})
}

// part is one of the agent's parts, which runs until its context ends.
type part struct {
	name string
	run  func(context.Context) error
}

// runAll runs parts until ctx ends or one of them returns, then ends the others' context and
// waits for them. It returns the error of the part that returned first, or, if none returned
// before ctx ended, ctx's error. A part that returns nil before ctx ends has stopped all the
// same: its error says so.
func runAll(ctx context.Context, parts []part) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, len(parts))
	for _, p := range parts {
		go func() {
			err := p.run(runCtx)
			if runCtx.Err() == nil { // stopped by itself
				if err == nil {
					err = errors.New(p.name + " stopped")
				}
				err = fmt.Errorf("%s: %w", p.name, err)
			} else {
				err = nil // stopped as asked
			}
			done <- err
		}()
	}
	var first error
	for range parts {
		if err := <-done; err != nil && first == nil {
			first = err
		}
		cancel()
	}
	if first != nil {
		return first
	}
	return ctx.Err()
}
