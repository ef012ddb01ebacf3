//go:build integration

package netchaos

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// link is a relay to the server and a partition of the relay's port, as testenv's Links are.
type link struct {
	relay *Relay
	part  *Partition
}

func newLink(t *testing.T, target string) *link {
	t.Helper()
	r, err := NewRelay(target)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPartition(r.Port())
	if err != nil {
		_ = r.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Heal(); err != nil {
			t.Error(err)
		}
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return &link{relay: r, part: p}
}

// get asks url with client, giving up after timeout; it says whether the request went over a
// connection used before.
func get(client *http.Client, url string, timeout time.Duration) (reused bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return reused, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err == nil && string(body) != "pong" {
		err = io.ErrUnexpectedEOF
	}
	return reused, err
}

// rules is iptables -S: every rule and chain of the filter table.
func rules(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("iptables", "-w", "-S").CombinedOutput()
	if err != nil {
		t.Fatalf("iptables -S: %v: %s", err, out)
	}
	return string(out)
}

func TestCutAndHeal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "pong") }))
	t.Cleanup(srv.Close)
	target := strings.TrimPrefix(srv.URL, "http://")
	a, b := newLink(t, target), newLink(t, target)
	urlA, urlB := "http://"+a.relay.Addr()+"/", "http://"+b.relay.Addr()+"/"
	const ok, cut = 10 * time.Second, time.Second

	// keepAlive holds one connection to the server through a's relay; fresh makes a new
	// connection for every request.
	keepAlive := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	t.Cleanup(keepAlive.CloseIdleConnections)

	if _, err := get(keepAlive, urlA, ok); err != nil {
		t.Fatalf("before the cut, through a: %v", err)
	}
	if reused, err := get(keepAlive, urlA, ok); err != nil || !reused {
		t.Fatalf("before the cut, again through a: reused %v, %v; want the kept connection to answer", reused, err)
	}
	if _, err := get(fresh, urlB, ok); err != nil {
		t.Fatalf("before the cut, through b: %v", err)
	}

	if err := a.part.Cut(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rules(t), "-j "+a.part.Chain()) {
		t.Errorf("cut, but iptables -S has no jump to %s:\n%s", a.part.Chain(), rules(t))
	}
	if reused, err := get(keepAlive, urlA, cut); err == nil || !reused {
		t.Errorf("cut: a request on the established connection through a: reused %v, error %v; want it to hang on the reused connection", reused, err)
	}
	if _, err := get(fresh, urlA, cut); err == nil {
		t.Error("cut: a new connection through a answered")
	}
	// Other ports, another link's and the server's own, still answer.
	if _, err := get(fresh, urlB, ok); err != nil {
		t.Errorf("a cut: b failed: %v", err)
	}
	if _, err := get(fresh, srv.URL, ok); err != nil {
		t.Errorf("a cut: the server itself failed: %v", err)
	}

	if err := a.part.Heal(); err != nil {
		t.Fatal(err)
	}
	if s := rules(t); strings.Contains(s, a.part.Chain()) {
		t.Errorf("healed, but iptables -S still has %s:\n%s", a.part.Chain(), s)
	}
	if _, err := get(fresh, urlA, ok); err != nil {
		t.Errorf("healed: a new connection through a: %v", err)
	}

	// Cut again, and close as the test's cleanup does: nothing of either link stays.
	if err := a.part.Cut(); err != nil {
		t.Fatal(err)
	}
	if err := b.part.Cut(); err != nil {
		t.Fatal(err)
	}
	for _, l := range []*link{a, b} {
		if err := l.part.Heal(); err != nil {
			t.Fatal(err)
		}
		if err := l.relay.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if s := rules(t); strings.Contains(s, a.part.Chain()) || strings.Contains(s, b.part.Chain()) {
		t.Errorf("closed, but iptables -S still has %s or %s:\n%s", a.part.Chain(), b.part.Chain(), s)
	}
	if _, err := get(fresh, urlA, ok); err == nil {
		t.Error("a closed relay still answers")
	}
}
