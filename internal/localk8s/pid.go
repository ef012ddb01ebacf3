package localk8s

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Running reports whether pid is a live (not zombie) process running binary. Checking the binary
// guards against a recycled pid: a stopped fleet's pid may belong to another program by now.
func Running(pid int, binary string) bool {
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return false // gone, a zombie, or not ours to inspect
	}
	if strings.TrimSuffix(exe, " (deleted)") != binary {
		return false
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
