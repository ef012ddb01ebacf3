//go:build integration

package flowerctl

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla/flotilla/internal/hub/flowerfront"
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

// TestSuperLinkNodes registers a SuperNode's key with a real Flower 1.42 SuperLink started with
// --enable-supernode-auth (which Flower allows only with TLS), lets a SuperNode with that key
// connect, and unregisters it, on both of Flower's state stores.
func TestSuperLinkNodes(t *testing.T) {
	if findPython() == "" {
		t.Fatal("no python3 (nor $FLOTILLA_PYTHON): hack/flwr/venv.sh cannot build the Flower venv that this test runs; install Python 3.10+ with venv (Debian: python3-venv, which .ci/run installs) or set FLOTILLA_PYTHON")
	}
	for name, database := range map[string]string{"in memory": "", "SQLite": "state.db"} {
		t.Run(name, func(t *testing.T) { testNodes(t, database) })
	}
}

func testNodes(t *testing.T, database string) {
	f := prepareFederation(t)
	ports := freePorts(t, 1)
	f.link = fmt.Sprintf("127.0.0.1:%d", ports[0])
	certs := filepath.Dir(f.caFile)
	args := []string{"--ssl-ca-certfile", f.caFile, "--ssl-certfile", filepath.Join(certs, "server.pem"),
		"--ssl-keyfile", filepath.Join(certs, "server.key"), "--enable-supernode-auth",
		"--isolation", "process", "--host", "127.0.0.1", "--port", fmt.Sprint(ports[0])}
	if database != "" {
		args = append(args, "--database", filepath.Join(f.work, database))
	}
	f.start("superlink", nil, "flower-superlink", args...)
	c := &Client{Address: f.link, TLS: f.tlsConfig(), AllowLocal: true}
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	var nodes []Node
	var err error
	for { // the SuperLink is up once ListNodes answers; a fresh one has no nodes
		if nodes, err = c.ListNodes(ctx); err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil || len(nodes) != 0 {
		t.Fatalf("ListNodes of a fresh SuperLink: %+v, %v; want none", nodes, err)
	}

	// The key as Go writes it: what the hub registers for a cluster's SuperNode.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	publicPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	id, err := c.RegisterNode(ctx, publicPEM, "cluster-a")
	if err != nil || id == 0 {
		t.Fatalf("RegisterNode: %d, %v; want a node ID", id, err)
	}
	if _, err := c.RegisterNode(ctx, publicPEM, ""); !IsAlreadyExists(err) ||
		!strings.Contains(err.Error(), "RegisterNode: HTTP 412: Public key already in use. (Flower error code 23)") {
		t.Errorf("RegisterNode of the same key again: %v, want IsAlreadyExists", err)
	}
	registered := Node{ID: id, PublicKeyPEM: publicPEM, Status: "registered", Name: "cluster-a"}
	if nodes, err = c.ListNodes(ctx); err != nil || !cmp.Equal(nodes, []Node{registered}) {
		t.Errorf("ListNodes after RegisterNode: %+v, %v; want %+v", nodes, err, registered)
	}

	// A SuperNode with the key connects: Flower matches the key it signs with to the one
	// registered, byte for byte.
	f.start("supernode", nil, "flower-supernode", "--superlink", f.link, "--root-certificates", f.caFile,
		"--auth-supernode-private-key", sshPrivateKey(t, f, key), "--isolation", "process",
		"--host", "127.0.0.1", "--port", fmt.Sprint(freePorts(t, 1)[0]))
	status := ""
	for ctx.Err() == nil && status != "online" {
		time.Sleep(500 * time.Millisecond)
		if nodes, err = c.ListNodes(ctx); err == nil && len(nodes) == 1 {
			status = nodes[0].Status
		}
	}
	if status != "online" {
		t.Fatalf("the SuperNode with the registered key never came online: nodes %+v, %v", nodes, err)
	}

	if err := c.UnregisterNode(ctx, id); err != nil {
		t.Fatalf("UnregisterNode(%d): %v", id, err)
	}
	if nodes, err = c.ListNodes(ctx); err != nil || len(nodes) != 1 || nodes[0].ID != id || nodes[0].Status != "unregistered" {
		t.Errorf("ListNodes after UnregisterNode: %+v, %v; want node %d listed as unregistered", nodes, err, id)
	}
	if err := c.UnregisterNode(ctx, id); !IsNotFound(err) {
		t.Errorf("UnregisterNode of an unregistered node: %v, want IsNotFound", err)
	}
	if _, err := c.RegisterNode(ctx, publicPEM, ""); !IsAlreadyExists(err) {
		t.Errorf("RegisterNode of an unregistered node's key: %v, want IsAlreadyExists (Flower keeps the key taken)", err)
	}

	// A node that never connected.
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ = x509.MarshalPKIXPublicKey(&other.PublicKey)
	otherID, err := c.RegisterNode(ctx, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), "")
	if err != nil {
		t.Fatalf("RegisterNode of a second key: %v", err)
	}
	if err := c.UnregisterNode(ctx, otherID); err != nil {
		t.Errorf("UnregisterNode of a node that never connected: %v", err)
	}
	nodes, err = c.ListNodes(ctx)
	statuses := map[uint64]string{}
	for _, n := range nodes {
		statuses[n.ID] = n.Status
	}
	if diff := cmp.Diff(map[uint64]string{id: "unregistered", otherID: "unregistered"}, statuses); err != nil || diff != "" {
		t.Errorf("ListNodes at the end: %v; statuses (-want +got):\n%s", err, diff)
	}
}

// sshPrivateKey writes key as flower-supernode's --auth-supernode-private-key wants it, an
// OpenSSH private key, converted by the venv's cryptography from PKCS #8, and returns the path.
func sshPrivateKey(t *testing.T, f *federation, key *ecdsa.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8 := filepath.Join(f.work, "supernode.pk8")
	if err := os.WriteFile(pkcs8, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(f.work, "supernode.key")
	const convert = `import sys
from cryptography.hazmat.primitives import serialization as s
k = s.load_pem_private_key(open(sys.argv[1], "rb").read(), None)
open(sys.argv[2], "wb").write(k.private_bytes(s.Encoding.PEM, s.PrivateFormat.OpenSSH, s.NoEncryption()))`
	f.run(filepath.Join(f.venv, "bin/python"), "-c", convert, pkcs8, out)
	return out
}

// TestSuperLinkBehindFront reaches a real SuperLink (plain HTTP on loopback, as in a
// federation's pod) through the front (internal/hub/flowerfront): the Control API answers the
// client with the hub's token and refuses one without it.
func TestSuperLinkBehindFront(t *testing.T) {
	if findPython() == "" {
		t.Fatal("no python3 (nor $FLOTILLA_PYTHON): hack/flwr/venv.sh cannot build the Flower venv that this test runs; install Python 3.10+ with venv (Debian: python3-venv, which .ci/run installs) or set FLOTILLA_PYTHON")
	}
	f := prepareFederation(t)
	port := freePorts(t, 1)[0]
	f.start("superlink", nil, "flower-superlink", "--insecure", "--isolation", "process", "--host", "127.0.0.1", "--port", fmt.Sprint(port))
	upstream := &url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", port)}
	front := httptest.NewTLSServer(flowerfront.Handler(upstream, []byte("hub-token")))
	defer front.Close()
	tlsConfig := front.Client().Transport.(*http.Transport).TLSClientConfig
	hub := &Client{Address: front.Listener.Addr().String(), TLS: tlsConfig, AllowLocal: true, Token: "hub-token"}
	defer hub.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var err error
	for { // the SuperLink is up once ListRuns answers through the front
		if _, err = hub.ListRuns(ctx, ListRunsOptions{}); err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("ListRuns through the front with the hub's token: %v", err)
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	id, err := hub.RegisterNode(ctx, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), "")
	if err != nil || id == 0 {
		t.Errorf("RegisterNode through the front (SuperLink without --enable-supernode-auth): %d, %v", id, err)
	}
	if _, err := hub.GetRun(ctx, 12345); !IsNotFound(err) {
		t.Errorf("GetRun of an unknown run through the front: %v, want the SuperLink's 404", err)
	}

	user := &Client{Address: hub.Address, TLS: tlsConfig, AllowLocal: true}
	defer user.CloseIdleConnections()
	_, err = user.ListNodes(ctx)
	var e *Error
	if !errors.As(err, &e) || e.HTTPStatus != http.StatusForbidden || !strings.Contains(e.Detail, "kubectl port-forward") {
		t.Errorf("ListNodes through the front without the hub's token: %v, want 403 naming kubectl port-forward", err)
	}
	resp, err := front.Client().Get(front.URL + "/health")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET /health through the front: %v, %v; want 200", resp, err)
	}
	if resp != nil {
		_ = resp.Body.Close()
	}
}
