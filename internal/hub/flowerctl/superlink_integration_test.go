//go:build integration

package flowerctl

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSuperLink runs a real Flower 1.42 federation (SuperLink with TLS, two SuperNodes, the
// example app for one round) and reads it through the Control API: the run's status, and its
// log both as one stream held open across the run and in short incremental reads.
func TestSuperLink(t *testing.T) {
	if findPython() == "" {
		t.Fatal("no python3 (nor $FLOTILLA_PYTHON): hack/flwr/venv.sh cannot build the Flower venv that this test runs; install Python 3.10+ with venv (Debian: python3-venv, which .ci/run installs) or set FLOTILLA_PYTHON")
	}
	start := time.Now()
	clusters := []string{"cluster-a", "cluster-b"}
	f := startFederation(t, clusters)
	c := &Client{Address: f.link, TLS: f.tlsConfig(), AllowLocal: true}
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// The SuperLink is up once ListRuns answers; a fresh one has no runs.
	var runs []Run
	var err error
	for {
		runs, err = c.ListRuns(ctx, ListRunsOptions{})
		if err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("SuperLink %s never answered ListRuns: %v", f.link, err)
	}
	if len(runs) != 0 {
		t.Errorf("a fresh SuperLink lists runs %+v, want none", runs)
	}
	t.Logf("SuperLink answers after %.1fs", time.Since(start).Seconds())

	// Errors as the real SuperLink gives them.
	_, err = c.GetRun(ctx, 12345)
	if !IsNotFound(err) || !strings.Contains(err.Error(), f.link+": ListRuns: HTTP 404: Run ID not found. (Flower error code 16)") {
		t.Errorf("GetRun of an unknown run: error = %v, want the SuperLink's 404 naming address and method", err)
	}
	if _, err = c.Logs(ctx, 12345, 0); !IsNotFound(err) {
		t.Errorf("Logs of an unknown run: error = %v, want the SuperLink's 404", err)
	}
	plain := &Client{Address: f.link, AllowLocal: true}
	if _, err = plain.ListRuns(ctx, ListRunsOptions{}); err == nil || !strings.Contains(err.Error(), "set Client.TLS") {
		t.Errorf("plain HTTP to the TLS SuperLink: error = %v, want a hint to set Client.TLS", err)
	}

	submitted := time.Now()
	// The run names a FederatedLearning, as the hub asks (the example app declares the key).
	runID := f.submit(`num-server-rounds=1 min-available-clients=2 flotilla-federation="uid-of-a-federation"`)
	t.Logf("submitted run %d after %.1fs", runID, time.Since(start).Seconds())

	// One stream held open from the start: it must end by itself when the run finishes.
	type streamResult struct {
		log  Log
		err  error
		took time.Duration
	}
	whole := make(chan streamResult, 1)
	go func() {
		t0 := time.Now()
		l, err := c.Logs(ctx, runID, 0)
		whole <- streamResult{l, err, time.Since(t0)}
	}()

	// Meanwhile: short reads that resume from Latest, and the run's status.
	var incremental strings.Builder
	latest, cutReads, statuses := 0.0, 0, map[string]bool{}
	var run Run
	var finishedSeen time.Time
	for ctx.Err() == nil {
		readCtx, cancelRead := context.WithTimeout(ctx, 1500*time.Millisecond)
		l, err := c.Logs(readCtx, runID, latest)
		cancelRead()
		if err != nil {
			t.Fatalf("Logs(after %f): %v", latest, err)
		}
		if !l.Complete {
			cutReads++
		}
		incremental.WriteString(l.Text)
		latest = l.Latest
		if run, err = c.GetRun(ctx, runID); err != nil {
			t.Fatalf("GetRun(%d): %v", runID, err)
		}
		statuses[run.StatusText()] = true
		if run.Status == "finished" {
			finishedSeen = time.Now()
			break
		}
	}
	if run.StatusText() != "finished:completed" {
		t.Fatalf("run %d: status %q (%s) after %.0fs, want finished:completed", runID, run.StatusText(), run.Details,
			time.Since(submitted).Seconds())
	}
	t.Logf("run %d finished:completed %.1fs after submit; statuses seen %v; %d of the short reads were cut by their deadline",
		runID, finishedSeen.Sub(submitted).Seconds(), statuses, cutReads)
	if cutReads == 0 {
		t.Errorf("no short Logs read was cut by its deadline: the stream should stay open while the run runs")
	}

	var held streamResult
	select {
	case held = <-whole:
	case <-time.After(10 * time.Second):
		t.Fatalf("the stream opened at submit has not ended 10 s after run %d finished", runID)
	}
	if held.err != nil || !held.log.Complete {
		t.Fatalf("the stream held across the run: Complete %v, error %v; want it ended by the SuperLink", held.log.Complete, held.err)
	}
	t.Logf("the stream held from submit ended by itself after %.1fs (%d bytes, latest %f)",
		held.took.Seconds(), len(held.log.Text), held.log.Latest)

	// The run as ListRuns lists it.
	runs, err = c.ListRuns(ctx, ListRunsOptions{})
	if err != nil {
		t.Fatalf("ListRuns: %v", err)
	}
	if len(runs) != 1 || runs[0].ID != runID || runs[0].FabID != "flotilla/flotilla-fl" ||
		runs[0].StatusText() != "finished:completed" || runs[0].FinishedAt == "" {
		t.Errorf("ListRuns = %+v, want run %d of flotilla/flotilla-fl, finished:completed with FinishedAt", runs, runID)
	}
	if len(runs) == 1 && runs[0].OverrideConfig["flotilla-federation"] != "uid-of-a-federation" {
		t.Errorf("run %d's run config = %v, want flotilla-federation uid-of-a-federation", runID, runs[0].OverrideConfig)
	}

	// After the run: all of the log in one read, and nothing after its Latest.
	final, err := c.Logs(ctx, runID, 0)
	if err != nil || !final.Complete {
		t.Fatalf("Logs of the finished run: %+v, %v; want the stream ended", final.Complete, err)
	}
	for _, want := range []string{"[ROUND 1/1]", "FLOTILLA_PROGRESS {"} {
		if !strings.Contains(final.Text, want) {
			t.Errorf("the run's log lacks %q:\n%s", want, final.Text)
		}
	}
	checkProgress(t, final.Text, clusters)
	if diff := cmp.Diff(final, held.log); diff != "" {
		t.Errorf("the stream held across the run differs from a read after it (-after +held):\n%s", diff)
	}
	rest, err := c.Logs(ctx, runID, latest)
	if err != nil || !rest.Complete {
		t.Fatalf("Logs after the short reads: %+v, %v", rest, err)
	}
	incremental.WriteString(rest.Text)
	if diff := cmp.Diff(final.Text, incremental.String()); diff != "" {
		t.Errorf("the short reads resumed from Latest do not add up to the log (-whole +pieces):\n%s", diff)
	}
	if none, err := c.Logs(ctx, runID, final.Latest); err != nil || none.Text != "" || !none.Complete || none.Latest != final.Latest {
		t.Errorf("Logs after the last timestamp = %+v, %v; want no text, Complete, Latest unchanged", none, err)
	}
	// Timestamps are Unix seconds of the SuperLink's clock, this machine's.
	if ts := time.Unix(0, int64(final.Latest*1e9)); ts.Before(submitted) || ts.After(time.Now()) {
		t.Errorf("Latest %f (%v) is not between submit (%v) and now", final.Latest, ts, submitted)
	}
	t.Logf("total %.1fs", time.Since(start).Seconds())
}

// checkProgress checks the one FLOTILLA_PROGRESS line of a one-round run.
func checkProgress(t *testing.T, log string, clusters []string) {
	t.Helper()
	var lines []string
	for line := range strings.SplitSeq(log, "\n") {
		if rest, ok := strings.CutPrefix(line, "FLOTILLA_PROGRESS "); ok {
			lines = append(lines, rest)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("FLOTILLA_PROGRESS lines: %q, want one for one round", lines)
	}
	var p struct {
		Round   int      `json:"round"`
		Rounds  int      `json:"rounds"`
		Clients []string `json:"clients"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &p); err != nil {
		t.Fatalf("FLOTILLA_PROGRESS %s: %v", lines[0], err)
	}
	if diff := cmp.Diff(struct {
		Round, Rounds int
		Clients       []string
	}{1, 1, clusters}, struct {
		Round, Rounds int
		Clients       []string
	}{p.Round, p.Rounds, p.Clients}); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}
