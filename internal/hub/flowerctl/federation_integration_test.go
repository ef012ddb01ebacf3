//go:build integration

package flowerctl

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// federation is a real Flower 1.42 deployment on loopback, as hack/flwr/run-local.sh starts it:
// one SuperLink (TLS), one SuperNode and one ClientApp SuperExec per cluster, one ServerApp
// SuperExec, each a process in its own process group with its own FLWR_HOME.
type federation struct {
	t       *testing.T
	repo    string // repository root
	venv    string
	work    string
	link    string // SuperLink host:port
	caFile  string
	cliHome string // FLWR_HOME of the flwr CLI, with config.toml naming the SuperLink "flotilla"
	procs   []*proc
}

type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when cmd.Wait returned
}

// findPython returns the Python hack/flwr/venv.sh would use, or "" if there is none.
func findPython() string {
	if p := os.Getenv("FLOTILLA_PYTHON"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	p, _ := exec.LookPath("python3")
	return p
}

// startFederation builds the venv (once; cached) and starts every process but the run itself.
func startFederation(t *testing.T, clusters []string) *federation {
	t.Helper()
	f := prepareFederation(t)
	py := filepath.Join(f.venv, "bin/python")
	certs := filepath.Dir(f.caFile)
	ports := freePorts(t, len(clusters)+1)
	f.link = fmt.Sprintf("127.0.0.1:%d", ports[0])
	data := filepath.Join(f.work, "data")
	f.runIn(filepath.Join(f.repo, "examples/federated-learning"), py, "-m", "flotilla_fl.data", "generate",
		"--out", data, "--clusters", strings.Join(clusters, ","), "--seed", "7")

	f.start("superlink", nil, "flower-superlink", "--ssl-ca-certfile", f.caFile,
		"--ssl-certfile", filepath.Join(certs, "server.pem"), "--ssl-keyfile", filepath.Join(certs, "server.key"),
		"--isolation", "process", "--host", "127.0.0.1", "--port", fmt.Sprint(ports[0]))
	for i, c := range clusters {
		node := fmt.Sprintf("127.0.0.1:%d", ports[i+1])
		f.start("supernode-"+c, nil, "flower-supernode", "--superlink", f.link, "--root-certificates", f.caFile,
			"--node-config", fmt.Sprintf("cluster-name=%q", c), "--isolation", "process",
			"--host", "127.0.0.1", "--port", fmt.Sprint(ports[i+1]))
		f.start("superexec-clientapp-"+c, []string{"FLOTILLA_DATA_PATH=" + filepath.Join(data, c)},
			"flower-superexec", "--insecure", "--runtime-api-address", node)
	}
	f.start("superexec-serverapp",
		[]string{"FLOTILLA_TEST_PATH=" + filepath.Join(data, "test"), "FLOTILLA_OUTPUT_PATH=" + filepath.Join(f.work, "out")},
		"flower-superexec", "--root-certificates", f.caFile, "--runtime-api-address", f.link)

	f.cliHome = filepath.Join(f.work, "home", "cli")
	config := fmt.Sprintf("[superlink]\ndefault = \"flotilla\"\n\n[superlink.flotilla]\naddress = %q\nroot-certificates = %q\n",
		f.link, f.caFile)
	if err := os.MkdirAll(f.cliHome, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.cliHome, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// prepareFederation builds the venv (once; cached) and the TLS certificates of a federation on
// loopback (certs/ca.crt, server.pem and server.key for 127.0.0.1 and localhost); it starts
// nothing, and stops what the test starts when it ends.
func prepareFederation(t *testing.T) *federation {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	f := &federation{t: t, repo: filepath.Join(wd, "..", "..", ".."), work: t.TempDir()} // internal/hub/flowerctl
	t.Cleanup(f.stop)

	venvCtx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(venvCtx, filepath.Join(f.repo, "hack/flwr/venv.sh")).Output()
	if err != nil {
		t.Fatalf("hack/flwr/venv.sh: %v\n%s", err, stderrOf(err))
	}
	f.venv = strings.TrimSpace(string(out))
	certs := filepath.Join(f.work, "certs")
	f.caFile = filepath.Join(certs, "ca.crt")
	f.run(filepath.Join(f.venv, "bin/python"), filepath.Join(f.repo, "hack/flwr/certs.py"), certs, "--san", "127.0.0.1", "--san", "localhost")
	return f
}

// tlsConfig trusts the federation's CA, as the flwr CLI's root-certificates does.
func (f *federation) tlsConfig() *tls.Config {
	pem, err := os.ReadFile(f.caFile)
	if err != nil {
		f.t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		f.t.Fatalf("%s holds no PEM certificate", f.caFile)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// submit runs `flwr run` for the example app and returns the run ID.
func (f *federation) submit(runConfig string) uint64 {
	f.t.Helper()
	out := f.runEnv(f.repo, []string{"FLWR_HOME=" + f.cliHome}, filepath.Join(f.venv, "bin/flwr"), "run",
		filepath.Join(f.repo, "examples/federated-learning"), "flotilla", "--format", "json", "--run-config", runConfig)
	var res struct {
		Success bool   `json:"success"`
		RunID   uint64 `json:"run-id,string"`
	}
	if err := json.Unmarshal(out, &res); err != nil || !res.Success || res.RunID == 0 {
		f.t.Fatalf("flwr run printed %q (%v), want success and a run-id", out, err)
	}
	return res.RunID
}

func (f *federation) env(extra []string) []string {
	env := append(os.Environ(),
		"FLWR_TELEMETRY_ENABLED=0", "FLWR_DISABLE_UPDATE_CHECK=1",
		// flower-superexec starts flwr-serverapp / flwr-clientapp by name from PATH.
		"PATH="+filepath.Join(f.venv, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	return append(env, extra...)
}

func (f *federation) run(name string, args ...string) []byte { return f.runEnv("", nil, name, args...) }

func (f *federation) runIn(dir, name string, args ...string) []byte {
	return f.runEnv(dir, nil, name, args...)
}

func (f *federation) runEnv(dir string, env []string, name string, args ...string) []byte {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, f.env(env)
	out, err := cmd.Output()
	if err != nil {
		f.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderrOf(err))
	}
	return out
}

// start starts one long-running process in its own process group, its output in a log file.
func (f *federation) start(name string, env []string, program string, args ...string) {
	f.t.Helper()
	home := filepath.Join(f.work, "home", name)
	if err := os.MkdirAll(home, 0o755); err != nil {
		f.t.Fatal(err)
	}
	logPath := filepath.Join(f.work, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		f.t.Fatal(err)
	}
	defer func() { _ = logFile.Close() }() // the child has its own descriptor
	cmd := exec.Command(filepath.Join(f.venv, "bin", program), args...)
	cmd.Env = f.env(append([]string{"FLWR_HOME=" + home}, env...))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its children stop with it
	if err := cmd.Start(); err != nil {
		f.t.Fatalf("starting %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	f.procs = append(f.procs, p)
}

// stop stops every started process group (SIGTERM, then SIGKILL after 5 s) and, if the test
// failed, shows the end of each process's log.
func (f *federation) stop() {
	for _, p := range f.procs {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	}
	deadline := time.After(5 * time.Second)
	for _, p := range f.procs {
		select {
		case <-p.done:
		case <-deadline:
		}
	}
	for _, p := range f.procs {
		// The group may outlive its leader (a SuperExec's app process): kill what is left.
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		if f.t.Failed() {
			b, _ := os.ReadFile(p.log)
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(lines) > 25 {
				lines = lines[len(lines)-25:]
			}
			f.t.Logf("--- %s (%s), last lines:\n%s", p.name, p.log, strings.Join(lines, "\n"))
		}
	}
}

// freePorts returns n distinct free TCP ports on 127.0.0.1 (held open together while chosen).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = l.Close() }()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}
