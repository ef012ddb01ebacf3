package testenv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Prometheus is a Prometheus server a test started.
type Prometheus struct {
	// URL is its base URL, such as http://127.0.0.1:40123.
	URL string
	// Log is the file its output goes to.
	Log string
}

// StartPrometheus runs Debian's prometheus (the binary on PATH) on 127.0.0.1 with a free port,
// scraping targets (host:port of test exporters serving /metrics) every second, with its storage
// in a temporary directory, and waits until it is ready. It stops, by its PID, when the test ends.
// A missing binary fails the test: install it with apt-get install prometheus.
func StartPrometheus(t testing.TB, targets ...string) *Prometheus {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("the prometheus binary is not on PATH (%v): install it with `apt-get install prometheus`", err)
	}
	dir := t.TempDir()
	quoted := make([]string, len(targets))
	for i, tg := range targets {
		quoted[i] = fmt.Sprintf("%q", tg)
	}
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n- job_name: test\n  static_configs:\n  - targets: [%s]\n",
		strings.Join(quoted, ", "))
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	logFile := filepath.Join(dir, "prometheus.log")
	out, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		t.Fatalf("starting %s: %v", bin, err)
	}
	pid := cmd.Process.Pid
	var waitErr error
	exited := make(chan struct{})
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(pid, syscall.SIGKILL)
			<-exited
		}
		_ = out.Close()
	})
	p := &Prometheus{URL: "http://" + addr, Log: logFile}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		select {
		case <-exited:
			b, _ := os.ReadFile(logFile)
			t.Fatalf("prometheus exited while starting: %v\n%s", waitErr, b)
		case <-ctx.Done():
			t.Fatalf("prometheus at %s not ready within 30s; its log is %s", p.URL, logFile)
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := http.Get(p.URL + "/-/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
	}
}

// freePort is a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}
