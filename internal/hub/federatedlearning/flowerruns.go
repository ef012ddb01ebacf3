package federatedlearning

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/flowerctl"
)

// FlowerRun is a federation's Flower run, as its SuperLink reports it.
type FlowerRun struct {
	ID                         uint64
	Status, SubStatus, Details string
	// Log is the ServerApp's output so far (Flower runs it in a child process whose output only
	// the SuperLink keeps).
	Log string
}

// RunConfigKey is the run-config key by which a Flower run names the FederatedLearning it is for:
// its value is the FederatedLearning's UID (`flwr run <app> <superlink> --run-config
// 'flotilla-federation="<uid>"'`).
const RunConfigKey = "flotilla-federation"

// FlowerRuns reads a Flower federation's run and its log through the Control API of the
// SuperLink that spec.server.superlink names (Flower 1.42 serves it on the same port).
//
// A SuperLink may be shared (flower-addon's is, by every federation on the hub) and takes runs
// from anyone who reaches it, so a run is not a federation's because it is newer than the
// federation: the federation's run is the first one (by the SuperLink's submission time) after
// the FederatedLearning was created whose run config names the FederatedLearning's UID
// (RunConfigKey), and once the controller has recorded it in status.flowerRunID it reads that
// run only. Another tenant who copies the UID from the run list can only submit later, so never
// takes a federation's run from it.
type FlowerRuns struct {
	// Resolve maps a Service address (host:port) to where the hub reaches it; nil keeps it (the
	// hub resolves cluster DNS). A local fleet, whose hub runs outside the cluster, sets it.
	Resolve func(ctx context.Context, hostport string) string
	// LogWait bounds each read of a running run's log (default 1 s).
	LogWait time.Duration
	// AllowLocal lets a SuperLink other than flower-addon's be on a loopback or link-local
	// address (a local fleet, tests); metadata addresses stay refused.
	AllowLocal bool

	// Clock times the SuperNode registrations (the real clock when nil).
	Clock clock.PassiveClock

	mu   sync.Mutex
	logs map[types.UID]*runLog
	// nodes records, per federation, the SuperNode keys last registered and when.
	nodes map[types.UID]nodeSync
}

// nodeSync is the last registration of a federation's SuperNode keys.
type nodeSync struct {
	keys string
	at   time.Time
}

// nodeResync is how often the SuperNode keys are registered again even when they did not change:
// a SuperLink without --database forgets them when it restarts.
const nodeResync = time.Minute

// SyncNodes registers the SuperNode public keys of want (PEM, by cluster) with the federation's
// own SuperLink (t) and unregisters every other node there, so that only the client clusters'
// SuperNodes are admitted (Flower checks each Fleet request's signature against the registered
// keys; the front refuses self-registration). It asks the SuperLink again when want changes and
// at least every nodeResync. Flower never registers an unregistered key again: the clusters whose
// key it lists as unregistered are returned (stale), to be given new keys.
func (f *FlowerRuns) SyncNodes(ctx context.Context, fl *flv1alpha1.FederatedLearning, t linkTarget, want map[string][]byte) (stale []string, err error) {
	keys := make([]string, 0, len(want))
	wanted := map[string]string{}
	for c, k := range want {
		keys = append(keys, c+"="+string(k))
		wanted[string(k)] = c
	}
	sort.Strings(keys)
	digest := strings.Join(keys, "\n")
	now := f.now()
	f.mu.Lock()
	last, ok := f.nodes[fl.UID]
	f.mu.Unlock()
	if ok && last.keys == digest && now.Sub(last.at) < nodeResync {
		return nil, nil
	}
	c, err := f.client(ctx, t)
	if err != nil {
		return nil, err
	}
	defer c.CloseIdleConnections()
	nodes, err := c.ListNodes(ctx)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, n := range nodes {
		cluster, ok := wanted[string(n.PublicKeyPEM)]
		switch {
		case ok && n.Status == nodeUnregistered:
			stale = append(stale, cluster)
			have[string(n.PublicKeyPEM)] = true
		case ok:
			have[string(n.PublicKeyPEM)] = true
		case n.Status == nodeUnregistered:
		default:
			if err := c.UnregisterNode(ctx, n.ID); err != nil && !flowerctl.IsNotFound(err) {
				return nil, fmt.Errorf("unregistering node %d, which is no client cluster's: %w", n.ID, err)
			}
		}
	}
	for _, k := range sortedKeysBytes(want) {
		if have[string(want[k])] {
			continue
		}
		if _, err := c.RegisterNode(ctx, want[k], ""); err != nil && !flowerctl.IsAlreadyExists(err) {
			return nil, fmt.Errorf("registering cluster %s's SuperNode: %w", k, err)
		}
	}
	if len(stale) > 0 {
		sort.Strings(stale)
		return stale, nil // not recorded: the keys change, and the next call registers the new ones
	}
	f.mu.Lock()
	if f.nodes == nil {
		f.nodes = map[types.UID]nodeSync{}
	}
	f.nodes[fl.UID] = nodeSync{keys: digest, at: now}
	f.mu.Unlock()
	return nil, nil
}

// nodeUnregistered is the status Flower lists an unregistered node with.
const nodeUnregistered = "unregistered"

func (f *FlowerRuns) now() time.Time {
	if f.Clock == nil {
		return time.Now()
	}
	return f.Clock.Now()
}

func sortedKeysBytes(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

type runLog struct {
	id       uint64
	text     strings.Builder
	latest   float64
	complete bool
}

// maxRunLog bounds the log kept per federation: the newest output is what progress needs.
const maxRunLog = 4 << 20

// linkTarget is a SuperLink's Control API as the hub reaches it.
type linkTarget struct {
	// Address is host:port: spec.server.superlink, or the Service of the federation's own
	// SuperLink.
	Address string
	// Insecure: plain HTTP; otherwise TLS trusting CAPEM ("": the system's roots).
	Insecure bool
	CAPEM    string
	// Token is the hub's bearer token for the front of the federation's own SuperLink.
	Token string
	// Own: the federation's own SuperLink, which the hub runs: reached on loopback too (a local
	// fleet). Any other is the federation author's word.
	Own bool
}

// client is a Control API client for t; the address is the federation author's word unless t
// is the federation's own SuperLink: the client then dials no loopback, link-local or metadata
// address (unless AllowLocal), uses no proxy and follows no redirect (internal/egress); an error
// wrapping egress.ErrRefused says so.
func (f *FlowerRuns) client(ctx context.Context, t linkTarget) (*flowerctl.Client, error) {
	if !t.Own {
		if err := checkSuperLink(t.Address, f.AllowLocal); err != nil {
			return nil, err
		}
	}
	host, _, _ := strings.Cut(t.Address, ":")
	c := &flowerctl.Client{Address: t.Address, AllowLocal: f.AllowLocal || t.Own, Token: t.Token}
	if f.Resolve != nil {
		c.Address = f.Resolve(ctx, t.Address)
	}
	if !t.Insecure {
		c.TLS = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
		if t.CAPEM != "" {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM([]byte(t.CAPEM)) {
				return nil, fmt.Errorf("the SuperLink's CA certificate is not PEM")
			}
			c.TLS.RootCAs = pool
		}
	}
	return c, nil
}

// Read returns fl's run (see FlowerRuns) with its log, or nil when there is none yet.
func (f *FlowerRuns) Read(ctx context.Context, fl *flv1alpha1.FederatedLearning, t linkTarget) (*FlowerRun, error) {
	c, err := f.client(ctx, t)
	if err != nil {
		return nil, err
	}
	defer c.CloseIdleConnections()
	runs, err := c.ListRuns(ctx, flowerctl.ListRunsOptions{Limit: 100})
	if err != nil {
		return nil, err
	}
	bound := fl.Status.FlowerRunID
	run := pickRun(runs, string(fl.UID), fl.CreationTimestamp.Time, bound)
	if run == nil && bound != "" {
		// Older than the runs listed: read it by its ID.
		id, err := strconv.ParseUint(bound, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("status.flowerRunID %q is not a run ID", bound)
		}
		got, err := c.GetRun(ctx, id)
		if err != nil {
			return nil, err
		}
		run = pickRun([]flowerctl.Run{got}, string(fl.UID), fl.CreationTimestamp.Time, bound)
	}
	if run == nil {
		return nil, nil
	}
	f.mu.Lock()
	if f.logs == nil {
		f.logs = map[types.UID]*runLog{}
	}
	l := f.logs[fl.UID]
	if l == nil || l.id != run.ID {
		l = &runLog{id: run.ID}
		f.logs[fl.UID] = l
	}
	f.mu.Unlock()
	if !l.complete {
		wait := f.LogWait
		if wait <= 0 {
			wait = time.Second
		}
		lctx, cancel := context.WithTimeout(ctx, wait)
		got, err := c.Logs(lctx, run.ID, l.latest)
		cancel()
		if err != nil && lctx.Err() == nil {
			return nil, err
		}
		if l.text.Len()+len(got.Text) <= maxRunLog {
			l.text.WriteString(got.Text)
		}
		l.latest, l.complete = got.Latest, got.Complete
	}
	return &FlowerRun{ID: run.ID, Status: run.Status, SubStatus: run.SubStatus, Details: run.Details, Log: l.text.String()}, nil
}

// Forget drops what is kept of a deleted federation's run.
func (f *FlowerRuns) Forget(uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.logs, uid)
	delete(f.nodes, uid)
}

// pickRun is the federation's run among runs: the one whose ID is bound when bound is set, else
// the first submitted after created whose run config names uid (ties by ID); nil when none. A
// bound run must name uid too.
func pickRun(runs []flowerctl.Run, uid string, created time.Time, bound string) *flowerctl.Run {
	var out *flowerctl.Run
	for i := range runs {
		r := &runs[i]
		if uid == "" || r.OverrideConfig[RunConfigKey] != uid {
			continue
		}
		if bound != "" {
			if strconv.FormatUint(r.ID, 10) == bound {
				return r
			}
			continue
		}
		if !submittedAfter(r.PendingAt, created) {
			continue
		}
		if out == nil || submittedBefore(r, out) {
			out = r
		}
	}
	return out
}

// submittedBefore orders runs by the SuperLink's submission time, then ID; a time that cannot
// be read sorts last.
func submittedBefore(a, b *flowerctl.Run) bool {
	ta, oka := parseISO(a.PendingAt)
	tb, okb := parseISO(b.PendingAt)
	switch {
	case oka && okb && !ta.Equal(tb):
		return ta.Before(tb)
	case oka != okb:
		return oka
	}
	return a.ID < b.ID
}

func parseISO(iso string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999"} {
		if at, err := time.Parse(layout, iso); err == nil {
			return at, true
		}
	}
	return time.Time{}, false
}

// submittedAfter parses the SuperLink's ISO 8601 time (Python's isoformat); an unreadable one
// counts as after, so that a format change does not hide every run.
func submittedAfter(iso string, t time.Time) bool {
	if at, ok := parseISO(iso); ok {
		return !at.Before(t.Truncate(time.Second))
	}
	return true
}
