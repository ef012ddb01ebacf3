//go:build integration

package federatedlearning

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub"
	"github.com/flotilla/flotilla/internal/hub/federatedlearning"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestFlowerRunIsTheFederations: two tenants' Flower federations share one SuperLink (as every
// federation shares flower-addon's). A federation follows only the run that names it in its run
// config, the first after its creation: tenant B's run, and a run naming no federation, both
// newer than A, never show in A's status; a run B submits later with A's UID copied from the
// run list does not take A's place; A completes when its own run does.
func TestFlowerRunIsTheFederations(t *testing.T) {
	link := newFakeSuperLink(t)
	f := startWith(t, "fl-two-tenants", func(o *hub.Options) {
		o.FlowerSuperLinkAllowLocal = true
		o.ResolveHubService = resolveTo(map[string]string{"superlink.shared:9091": link.addr()})
	})
	nsB := f.env.Namespace(t, f.env.Hub)
	tenant := func(ns, name string) *flv1alpha1.FederatedLearning {
		fl := f.flower(name, 1)
		fl.Namespace = ns
		fl.Spec.Client.Placement.ClusterSets = nil
		fl.Spec.Server.SuperLink, fl.Spec.Server.SuperLinkInsecure = "superlink.shared:9091", true
		testenv.Create(t, f.c, fl)
		return fl
	}
	a, b := tenant(f.set.Namespace, "tenant-a"), tenant(nsB, "tenant-b")

	// B's run, and a run naming no federation, both after A was made.
	link.add(fakeRun{id: 500, uid: string(b.UID), status: "running", log: "[ROUND 3/3]\n"}) // round 3 under way: 2 aggregated
	link.add(fakeRun{id: 900, status: "finished", subStatus: "completed", log: "[ROUND 3/3]\n"})
	gotB := f.waitStatus(t, b, "B bound to its own run", func(st *flv1alpha1.FederatedLearningStatus) bool {
		return st.FlowerRunID == "500" && st.Progress != nil && st.Progress.Round == 2
	})
	if gotB.Status.Phase == flv1alpha1.PhaseCompleted {
		t.Errorf("B completed with a run that is not its own: %s", describe(gotB))
	}
	link.waitPolls(t, 4) // A has read the runs too, at least once more
	cur, err := f.get(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if cur.Status.FlowerRunID != "" || cur.Status.Progress != nil || cur.Status.Phase == flv1alpha1.PhaseCompleted {
		t.Fatalf("A's status shows a run that is not A's: run %q, progress %+v, %s", cur.Status.FlowerRunID, cur.Status.Progress, describe(cur))
	}

	// A submits its run; B then submits one naming A, copied from the run list, which fails.
	link.add(fakeRun{id: 700, uid: string(a.UID), status: "running", log: "[ROUND 2/3]\n"})
	link.add(fakeRun{id: 3, uid: string(a.UID), status: "finished", subStatus: "failed", details: "B's code"})
	f.waitStatus(t, a, "A bound to its own run", func(st *flv1alpha1.FederatedLearningStatus) bool {
		return st.FlowerRunID == "700" && st.Progress != nil && st.Progress.Round == 1
	})
	link.waitPolls(t, 4)
	cur, err = f.get(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if cur.Status.FlowerRunID != "700" || cur.Status.Phase == flv1alpha1.PhaseFailed {
		t.Fatalf("A after B's copy of its UID: run %q, %s", cur.Status.FlowerRunID, describe(cur))
	}

	link.finish(700, "completed", "[ROUND 3/3]\nRun finished 3 round(s)\n")
	got := f.waitStatus(t, a, "A completed with its own run", func(st *flv1alpha1.FederatedLearningStatus) bool {
		return st.Phase == flv1alpha1.PhaseCompleted
	})
	if !hasEventText(got, "RunBound", "Flower run 700") {
		t.Errorf("A's timeline does not record binding run 700: %+v", got.Status.Timeline)
	}
	if cur, _ := f.get(context.Background(), b); cur.Status.FlowerRunID != "500" {
		t.Errorf("B's run is %q, want 500", cur.Status.FlowerRunID)
	}
}

func hasEventText(fl *flv1alpha1.FederatedLearning, event, text string) bool {
	for _, e := range fl.Status.Timeline {
		if e.Event == event && strings.Contains(e.Message, text) {
			return true
		}
	}
	return false
}

// fakeSuperLink answers Flower 1.42's Control API (ListRuns, StreamLogs) over plain HTTP with
// the runs the test adds, each submitted when added.
type fakeSuperLink struct {
	srv   *httptest.Server
	mu    sync.Mutex
	runs  map[uint64]*fakeRun
	polls int
}

type fakeRun struct {
	id                         uint64
	uid                        string // the run config's flotilla-federation, "" for none
	pendingAt                  string
	status, subStatus, details string
	log                        string
}

func newFakeSuperLink(t *testing.T) *fakeSuperLink {
	l := &fakeSuperLink{runs: map[uint64]*fakeRun{}}
	l.srv = httptest.NewServer(http.HandlerFunc(l.serve))
	t.Cleanup(l.srv.Close)
	return l
}

func (l *fakeSuperLink) addr() string { return strings.TrimPrefix(l.srv.URL, "http://") }

func (l *fakeSuperLink) add(r fakeRun) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r.pendingAt = time.Now().UTC().Format("2006-01-02T15:04:05.000000+00:00")
	time.Sleep(2 * time.Millisecond) // distinct submission times
	l.runs[r.id] = &r
}

func (l *fakeSuperLink) finish(id uint64, subStatus, log string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.runs[id]
	r.status, r.subStatus, r.log = "finished", subStatus, r.log+log
}

// waitPolls waits until the hub has listed the runs n more times.
func (l *fakeSuperLink) waitPolls(t *testing.T, n int) {
	t.Helper()
	l.mu.Lock()
	want := l.polls + n
	l.mu.Unlock()
	testenv.WaitFor(t, wait, fmt.Sprintf("%d more ListRuns calls", n), func(context.Context) (bool, string, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.polls >= want, fmt.Sprintf("%d of %d", l.polls, want), nil
	})
}

func (l *fakeSuperLink) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch r.URL.Path {
	case "/v1/control/list-runs":
		l.polls++
		var out []byte
		for id, run := range l.runs {
			var entry []byte
			entry = protowire.AppendTag(entry, 1, protowire.VarintType)
			entry = protowire.AppendVarint(entry, id)
			entry = protowire.AppendTag(entry, 2, protowire.BytesType)
			entry = protowire.AppendBytes(entry, run.encode())
			out = protowire.AppendTag(out, 1, protowire.BytesType)
			out = protowire.AppendBytes(out, entry)
		}
		w.Header().Set("Content-Type", "application/protobuf")
		_, _ = w.Write(out)
	case "/v1/control/stream-logs":
		var id uint64
		if num, typ, n := protowire.ConsumeTag(body); n > 0 && num == 1 && typ == protowire.VarintType {
			id, _ = protowire.ConsumeVarint(body[n:])
		}
		w.Header().Set("Content-Type", "application/flower-protobuf-stream")
		run := l.runs[id]
		if run == nil {
			return
		}
		var msg []byte
		msg = protowire.AppendTag(msg, 1, protowire.BytesType)
		msg = protowire.AppendString(msg, run.log)
		msg = protowire.AppendTag(msg, 2, protowire.Fixed64Type)
		msg = protowire.AppendFixed64(msg, math.Float64bits(float64(time.Now().Unix())))
		frame := []byte{byte(len(msg) >> 24), byte(len(msg) >> 16), byte(len(msg) >> 8), byte(len(msg))}
		_, _ = w.Write(append(frame, msg...))
	default:
		http.NotFound(w, r)
	}
}

// encode is the flwr.proto.Run of r.
func (r *fakeRun) encode() []byte {
	var b []byte
	str := func(num protowire.Number, s string) {
		if s != "" {
			b = protowire.AppendTag(b, num, protowire.BytesType)
			b = protowire.AppendString(b, s)
		}
	}
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, r.id)
	if r.uid != "" {
		var scalar, entry []byte
		scalar = protowire.AppendTag(scalar, 14, protowire.BytesType)
		scalar = protowire.AppendString(scalar, r.uid)
		entry = protowire.AppendTag(entry, 1, protowire.BytesType)
		entry = protowire.AppendString(entry, federatedlearning.RunConfigKey)
		entry = protowire.AppendTag(entry, 2, protowire.BytesType)
		entry = protowire.AppendBytes(entry, scalar)
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		b = protowire.AppendBytes(b, entry)
	}
	str(6, r.pendingAt)
	var st []byte
	if r.status != "" {
		st = protowire.AppendTag(st, 1, protowire.BytesType)
		st = protowire.AppendString(st, r.status)
	}
	if r.subStatus != "" {
		st = protowire.AppendTag(st, 2, protowire.BytesType)
		st = protowire.AppendString(st, r.subStatus)
	}
	if r.details != "" {
		st = protowire.AppendTag(st, 3, protowire.BytesType)
		st = protowire.AppendString(st, r.details)
	}
	b = protowire.AppendTag(b, 10, protowire.BytesType)
	b = protowire.AppendBytes(b, st)
	return b
}
