package localk8s

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is one running component (etcd, kube-apiserver, ...) with its output in a log file.
type Process struct {
	// Name identifies the process in messages, for example "gpu-east/kube-apiserver".
	Name string
	// LogPath is the file holding the process's stdout and stderr.
	LogPath string

	cmd  *exec.Cmd
	done chan struct{}

	mu      sync.Mutex
	waitErr error
}

// processSpec says how to start a process.
type processSpec struct {
	name    string
	binary  string
	args    []string
	logPath string
	// detach starts the process in its own session so that it outlives this program; otherwise it
	// is killed when this program dies.
	detach bool
	// env is the whole environment of the process; nil inherits this program's.
	env []string
	// dir is the working directory; empty is this program's.
	dir string
}

func startProcess(spec processSpec) (*Process, error) {
	if _, err := os.Stat(spec.binary); err != nil {
		return nil, fmt.Errorf("starting %s: binary %s not found (the Kubernetes binaries are built by `make k8s-bin`, flotilla by `make build`)", spec.name, spec.binary)
	}
	if err := os.MkdirAll(filepath.Dir(spec.logPath), 0o755); err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.name, err)
	}
	logFile, err := os.OpenFile(spec.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("starting %s: opening log: %w", spec.name, err)
	}
	cmd := exec.Command(spec.binary, spec.args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr(spec.detach)
	cmd.Env = spec.env
	cmd.Dir = spec.dir
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", spec.name, err)
	}
	p := &Process{Name: spec.name, LogPath: spec.logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		_ = logFile.Close()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

func sysProcAttr(detach bool) *syscall.SysProcAttr {
	if detach {
		// A new session: no signal from the terminal that ran `flotilla dev up` reaches it.
		return &syscall.SysProcAttr{Setsid: true}
	}
	// Its own process group, so Stop reaches any children; SIGKILL when the test binary dies, so
	// an interrupted or timed-out test leaves nothing behind.
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// PID is the operating system's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return true, p.waitErr
	default:
		return false, nil
	}
}

// ExitError describes a process that exited while it should have been running, with the end of its log.
func (p *Process) ExitError() error {
	exited, err := p.Exited()
	if !exited {
		return nil
	}
	how := "exited"
	if err != nil {
		how = err.Error()
	}
	return fmt.Errorf("%s (pid %d) %s; last lines of %s:\n%s", p.Name, p.PID(), how, p.LogPath, LogTail(p.LogPath, 20))
}

// ExitCode returns the exit code of an exited process and true, or false while it runs. A process
// ended by a signal reports 128 plus the signal's number, as a shell and the kubelet do (143 after
// SIGTERM, 137 after SIGKILL).
func (p *Process) ExitCode() (int, bool) {
	select {
	case <-p.done:
	default:
		return 0, false
	}
	st := p.cmd.ProcessState
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), true
	}
	return st.ExitCode(), true
}

// Stop sends SIGTERM to the process group, waits up to grace, then sends SIGKILL. Stopping an
// exited process does nothing.
func (p *Process) Stop(grace time.Duration) {
	if exited, _ := p.Exited(); exited {
		return
	}
	_ = signalGroup(p.PID(), syscall.SIGTERM)
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	_ = signalGroup(p.PID(), syscall.SIGKILL)
	<-p.done
}

// Kill sends SIGKILL and waits for the exit; tests use it to simulate a crash.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

func signalGroup(pid int, sig syscall.Signal) error {
	// The process leads its own group (Setpgid or Setsid), so -pid reaches it and its children.
	if err := syscall.Kill(-pid, sig); err != nil {
		return syscall.Kill(pid, sig)
	}
	return nil
}

// LogTail returns the last n lines of a log file, or a note saying why it cannot.
func LogTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("  (no log: %v)", err)
	}
	defer func() { _ = f.Close() }()
	const maxRead = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > maxRead {
		_, _ = f.Seek(st.Size()-maxRead, io.SeekStart)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Sprintf("  (reading log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString("  | ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

// errAddrInUse reports whether a process's log says it could not bind its port, so the caller can
// retry with new ports (another program may take a port between our probe and the bind).
func errAddrInUse(logPath string) bool {
	return strings.Contains(LogTail(logPath, 40), "address already in use")
}

// StartProcess starts a program that is not part of Kubernetes but belongs with the fleet (the
// Flotilla hub and agents), owned like the fleet's own processes: output to logPath, detached or
// killed with this program.
func StartProcess(name, binary string, args []string, logPath string, detach bool) (*Process, error) {
	return startProcess(processSpec{name: name, binary: binary, args: args, logPath: logPath, detach: detach})
}

// ProcessOptions says how StartProcessWith starts a program.
type ProcessOptions struct {
	// Name identifies the process in messages.
	Name string
	// Binary is the executable's path.
	Binary string
	Args   []string
	// LogPath receives the process's stdout and stderr (appended).
	LogPath string
	// Detach starts the process in its own session so that it outlives this program; otherwise
	// it is killed when this program dies.
	Detach bool
	// Env is the whole environment of the process, "NAME=value" each; nil inherits this
	// program's.
	Env []string
	// Dir is the working directory; empty is this program's.
	Dir string
}

// StartProcessWith is StartProcess with the process's environment and working directory: for
// programs that must not see this program's environment (a pod's container run locally).
func StartProcessWith(o ProcessOptions) (*Process, error) {
	return startProcess(processSpec{name: o.Name, binary: o.Binary, args: o.Args, logPath: o.LogPath, detach: o.Detach, env: o.Env, dir: o.Dir})
}

// CPUTicks is a process's user plus system CPU time, in clock ticks (getconf CLK_TCK, 100 on
// Linux), from /proc/<pid>/stat.
func CPUTicks(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name in parentheses may hold spaces; the fields after it start with the state
	// (field 3), so utime and stime (fields 14 and 15) are the 12th and 13th.
	i := strings.LastIndexByte(string(data), ')')
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat: %q", pid, data)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return utime + stime, nil
}
