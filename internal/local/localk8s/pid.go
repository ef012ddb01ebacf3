package localk8s

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ResolveBinary returns binary as /proc/PID/exe names a process running it: an absolute path
// with every symbolic link resolved. Record this, not the path a process was started with, to
// recognize the process later from another folder.
func ResolveBinary(binary string) (string, error) {
	abs, err := filepath.Abs(binary)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// Running reports whether pid is a live (not zombie) process running binary. Checking the binary
// guards against a recycled pid: a stopped fleet's pid may belong to another program by now.
// binary should be resolved (ResolveBinary); one that is not is resolved here as well as it can
// be, which fails for a relative path recorded in another folder.
func Running(pid int, binary string) bool {
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return false // gone, a zombie, or not ours to inspect
	}
	// A binary replaced since the process started (a rebuild) shows as "path (deleted)".
	exe = strings.TrimSuffix(exe, " (deleted)")
	if exe != binary {
		if resolved, err := ResolveBinary(binary); err != nil || exe != resolved {
			return false
		}
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses: "1234 (etcd) S ...".
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}

// StopPID stops a process this package started in an earlier run (a detached fleet): SIGTERM to
// its process group, then SIGKILL after grace. It does nothing when pid no longer runs binary.
func StopPID(pid int, binary string, grace time.Duration) error {
	if !Running(pid, binary) {
		return nil
	}
	_ = signalGroup(pid, syscall.SIGTERM)
	if waitGone(pid, binary, grace) {
		return nil
	}
	_ = signalGroup(pid, syscall.SIGKILL)
	if waitGone(pid, binary, 5*time.Second) {
		return nil
	}
	return fmt.Errorf("process %d (%s) still runs after SIGKILL", pid, binary)
}

func waitGone(pid int, binary string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for Running(pid, binary) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// Binary returns the path of the process's executable.
func (p *Process) Binary() string { return p.cmd.Path }
