package federatedlearning

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

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

	mu   sync.Mutex
	logs map[types.UID]*runLog
}

type runLog struct {
	id       uint64
	text     strings.Builder
	latest   float64
	complete bool
}

// maxRunLog bounds the log kept per federation: the newest output is what progress needs.
const maxRunLog = 4 << 20

// Read returns fl's run (see FlowerRuns) with its log, or nil when there is none yet. insecure: the
// SuperLink is reached without TLS; otherwise caPEM is its CA ("": the system's roots).
//
// The address is the federation author's word unless it is flower-addon's: the client then
// dials no loopback, link-local or metadata address (unless AllowLocal), uses no proxy and
// follows no redirect (internal/egress); an error wrapping egress.ErrRefused says so.
// flower-addon's SuperLink is the hub's own, reached where Resolve says (loopback in a local
// fleet).
func (f *FlowerRuns) Read(ctx context.Context, fl *flv1alpha1.FederatedLearning, caPEM string, insecure bool) (*FlowerRun, error) {
	addr := superLinkOrDefault(fl.Spec.Server.SuperLink)
	if err := checkSuperLink(addr, f.AllowLocal); err != nil {
		return nil, err
	}
	host, _, _ := strings.Cut(addr, ":")
	c := &flowerctl.Client{Address: addr, AllowLocal: f.AllowLocal || usesFlowerAddOn(addr)}
	if f.Resolve != nil {
		c.Address = f.Resolve(ctx, addr)
	}
	if !insecure {
		c.TLS = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
		if caPEM != "" {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM([]byte(caPEM)) {
				return nil, fmt.Errorf("the SuperLink's CA certificate is not PEM")
			}
			c.TLS.RootCAs = pool
		}
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
