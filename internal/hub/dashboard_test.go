package hub

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/flotilla/flotilla/internal/hub/dashboard"
)

// Two replicas that read one session.key open each other's sessions; without one, a session
// opens only on the replica that made it.
func TestDashboardSessionsShareTheKey(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, dashboard.SessionKeyFile), []byte(strings.Repeat("k", 48)), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := dashboardSessions(dir, clk)
	if err != nil {
		t.Fatal(err)
	}
	b, err := dashboardSessions(dir, clk)
	if err != nil {
		t.Fatal(err)
	}
	sealed, _, err := a.Seal("viewer-token")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Token(sealed); err != nil || got != "viewer-token" {
		t.Errorf("the other replica opened %q, %v; want the token", got, err)
	}
	alone, err := dashboardSessions("", clk)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alone.Token(sealed); err == nil {
		t.Error("a replica without the shared key opened another's session")
	}

	short := t.TempDir()
	if err := os.WriteFile(filepath.Join(short, dashboard.SessionKeyFile), []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := dashboardSessions(short, clk); err == nil || !strings.Contains(err.Error(), "--dashboard-cert-dir") {
		t.Errorf("a 5-byte key: %v, want a refusal naming --dashboard-cert-dir", err)
	}
}
