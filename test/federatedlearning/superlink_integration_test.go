//go:build integration

package federatedlearning

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub"
	"github.com/flotilla/flotilla/internal/hub/federatedlearning"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestSuperLinkRefused: spec.server.superlink is the federation author's word, and the hub
// polls it. One on a loopback address (the hub's own API server) is Failed InvalidSpec, naming the
// field, and nothing is made for it; one whose name resolves to loopback (here through the hub's
// Service resolver) is never dialed, and ServerReady says why.
func TestSuperLinkRefused(t *testing.T) {
	sniff := newSniffer(t)
	f := startWith(t, "fl-superlink-refused", func(o *hub.Options) {
		o.ResolveHubService = resolveTo(map[string]string{"superlink.ml-team:9091": sniff.addr()})
	})
	ctx := context.Background()

	apiServer := f.flower("api-server", 1)
	apiServer.Spec.Server.SuperLink = "127.0.0.1:6443"
	testenv.Create(t, f.c, apiServer)
	f.waitStatus(t, apiServer, "Failed naming spec.server.superlink", func(st *flv1alpha1.FederatedLearningStatus) bool {
		c := condition(st, federatedlearning.ConditionFailed)
		return st.Phase == flv1alpha1.PhaseFailed && c != nil && c.Reason == federatedlearning.ReasonInvalidSpec &&
			strings.Contains(st.Message, `spec.server.superlink "127.0.0.1:6443" is refused: refused: 127.0.0.1 is a loopback address`)
	})
	err := f.c.Get(ctx, client.ObjectKey{Namespace: apiServer.Namespace, Name: "api-server-serverapp"}, &appsv1.Deployment{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the ServerApp of a federation with a refused SuperLink: %v, want none made", err)
	}

	resolved := f.flower("resolved", 1)
	resolved.Spec.Server.SuperLink = "superlink.ml-team:9091"
	resolved.Spec.Server.SuperLinkInsecure = true
	testenv.Create(t, f.c, resolved)
	f.waitStatus(t, resolved, "ServerReady False SuperLinkRefused", func(st *flv1alpha1.FederatedLearningStatus) bool {
		c := condition(st, federatedlearning.ConditionServerReady)
		return c != nil && c.Reason == federatedlearning.ReasonSuperLinkRefused &&
			strings.Contains(c.Message, `the hub refuses to reach spec.server.superlink "superlink.ml-team:9091"`) &&
			strings.Contains(c.Message, "is a loopback address")
	})
	if got := sniff.seen(); len(got) != 0 {
		t.Errorf("the hub connected to a SuperLink that resolves to loopback: %q", got)
	}
}

// TestSuperLinkTLSAndRedirects: with local addresses allowed (a local fleet), the hub speaks TLS
// to a SuperLink other than flower-addon's unless the federation sets superlinkInsecure, and it
// follows no redirect: a SuperLink answering one is refused, ServerReady saying so, and the
// address it points to sees nothing.
func TestSuperLinkTLSAndRedirects(t *testing.T) {
	sniff := newSniffer(t)
	var mu sync.Mutex
	var targetHits []string
	target := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		mu.Lock()
		targetHits = append(targetHits, r.Method+" "+r.URL.Path)
		mu.Unlock()
	}))
	t.Cleanup(target.Close)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)
	f := startWith(t, "fl-superlink-tls", func(o *hub.Options) {
		o.FlowerSuperLinkAllowLocal = true
		o.ResolveHubService = resolveTo(map[string]string{
			"superlink.ml-team:9091":     sniff.addr(),
			"superlink.redirect-me:9091": strings.TrimPrefix(redirect.URL, "http://"),
		})
	})

	own := f.flower("own", 1)
	own.Spec.Server.SuperLink = "superlink.ml-team:9091"
	testenv.Create(t, f.c, own)
	testenv.WaitFor(t, wait, "the hub to connect to the SuperLink", func(context.Context) (bool, string, error) {
		return len(sniff.seen()) > 0, "no connection yet", nil
	})
	for _, first := range sniff.seen() {
		if !strings.HasPrefix(first, "\x16\x03") {
			t.Fatalf("the hub's first bytes to a SuperLink without superlinkInsecure: %q, want a TLS handshake", first)
		}
	}
	testenv.Update(t, f.c, own, func() { own.Spec.Server.SuperLinkInsecure = true })
	testenv.WaitFor(t, wait, "the hub to speak plain HTTP once superlinkInsecure is set", func(context.Context) (bool, string, error) {
		got := sniff.seen()
		return strings.HasPrefix(got[len(got)-1], "POST /v1/control/list-runs"), fmt.Sprintf("connections began %q", got), nil
	})

	redirected := f.flower("redirected", 1)
	redirected.Spec.Server.SuperLink = "superlink.redirect-me:9091"
	redirected.Spec.Server.SuperLinkInsecure = true
	testenv.Create(t, f.c, redirected)
	f.waitStatus(t, redirected, "ServerReady False SuperLinkRefused for the redirect", func(st *flv1alpha1.FederatedLearningStatus) bool {
		c := condition(st, federatedlearning.ConditionServerReady)
		return c != nil && c.Reason == federatedlearning.ReasonSuperLinkRefused && strings.Contains(c.Message, "redirects are not followed")
	})
	mu.Lock()
	defer mu.Unlock()
	if len(targetHits) != 0 {
		t.Errorf("the address the SuperLink redirected to got %v, want nothing", targetHits)
	}
}

// resolveTo is a hub Service resolver that maps the given addresses and keeps others.
func resolveTo(m map[string]string) func(context.Context, string) string {
	return func(_ context.Context, hostport string) string {
		if to, ok := m[hostport]; ok {
			return to
		}
		return hostport
	}
}

// sniffer is a loopback listener that records the first bytes of each connection and closes it.
type sniffer struct {
	l     net.Listener
	mu    sync.Mutex
	first []string
}

func newSniffer(t *testing.T) *sniffer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &sniffer{l: l}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
				buf := make([]byte, 64)
				n, _ := io.ReadAtLeast(c, buf, 30)
				if n == 0 {
					return
				}
				s.mu.Lock()
				s.first = append(s.first, string(buf[:n]))
				s.mu.Unlock()
			}()
		}
	}()
	return s
}

func (s *sniffer) addr() string { return s.l.Addr().String() }

func (s *sniffer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.first...)
}
