//go:build integration

package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
)

// profileEnv names a folder: when set, the hub's API server serves /debug/pprof and the
// benchmarks that support it (bench-addon) take a CPU profile of it over their measured window,
// written there and summarized in the output (its top functions), to name what the server spends
// its CPU on rather than guess.
const profileEnv = "FLOTILLA_BENCH_APISERVER_PROFILE"

func profileDir() string { return os.Getenv(profileEnv) }

// profileAPIServer starts a CPU profile of the API server kube serves over the next d, when
// profileEnv is set; the returned func waits for it, writes <profileEnv>/<name>.pprof and prints
// the profile's top functions by cumulative and by own time (go tool pprof, against binary). It
// does nothing without profileEnv.
func profileAPIServer(ctx context.Context, b *testing.B, pr progress, kube kubernetes.Interface, binary, name string, d time.Duration) func() {
	dir := profileDir()
	if dir == "" {
		return func() {}
	}
	done := make(chan struct{})
	var raw []byte
	var err error
	go func() {
		defer close(done)
		raw, err = kube.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
			Param("seconds", strconv.Itoa(int(d.Seconds()))).Timeout(d + time.Minute).DoRaw(ctx)
	}()
	return func() {
		<-done
		if err != nil {
			b.Fatalf("profiling the API server (%s): %v", profileEnv, err)
		}
		path := filepath.Join(dir, name+".pprof")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			b.Fatal(err)
		}
		for _, sort := range []string{"-cum", "-flat"} {
			out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", sort, "-nodecount=30", binary, path).CombinedOutput()
			if err != nil {
				b.Fatalf("go tool pprof %s: %v: %s", path, err, out)
			}
			pr.printf("API server CPU profile %s (%s):\n%s", path, sort, out)
		}
	}
}
