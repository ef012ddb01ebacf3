package devfleet

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// startSleep starts sleep through a symbolic link, by a path relative to the test's folder, as
// `dev up --k8s-bin bin` starts binaries from a linked folder. The process is killed with the
// test binary (not detached) and stopped at the end of the test by its pid.
func startSleep(t *testing.T) (p *localk8s.Process, relative string) {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatalf("this test runs sleep: %v", err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir("bin", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sleep, filepath.Join("bin", "kube-apiserver")); err != nil {
		t.Fatal(err)
	}
	relative = filepath.Join("bin", "kube-apiserver")
	p, err = localk8s.StartProcess("test/sleep", relative, []string{"600"}, filepath.Join(dir, "sleep.log"), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(time.Second) })
	return p, relative
}

func TestRecordedBinaryIsResolved(t *testing.T) {
	p, relative := startSleep(t)
	ps := processState("hub", p)
	want, err := filepath.EvalSymlinks(filepath.Join(must(os.Getwd()), relative))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, ps.Binary); diff != "" {
		t.Errorf("recorded binary (-want +got):\n%s", diff)
	}
	exe, err := os.Readlink("/proc/" + strconv.Itoa(p.PID()) + "/exe")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(exe, ps.Binary); diff != "" {
		t.Errorf("recorded binary differs from /proc/PID/exe (-exe +recorded):\n%s", diff)
	}

	// From another folder, as `dev status` and `dev down` run: the recorded path finds the
	// process; the path it was started with (what used to be recorded) does not.
	t.Chdir(t.TempDir())
	if !localk8s.Running(ps.PID, ps.Binary) {
		t.Errorf("Running(%d, %s) = false from another folder, want true", ps.PID, ps.Binary)
	}
	if localk8s.Running(ps.PID, relative) {
		t.Errorf("Running(%d, %s) = true from another folder; the test no longer shows why paths are resolved", ps.PID, relative)
	}
	// A recycled pid running another program is not ours.
	if localk8s.Running(ps.PID, "/usr/bin/etcd") {
		t.Errorf("Running(%d, /usr/bin/etcd) = true for a sleep process", ps.PID)
	}
}

// TestDownStopsAFleetStartedThroughALink is what `dev down` once got wrong: with the binary
// recorded as started (relative, through a link), it found nothing running and left the
// process behind.
func TestDownStopsAFleetStartedThroughALink(t *testing.T) {
	p, _ := startSleep(t)
	state := filepath.Join(t.TempDir(), "state")
	st := &State{FleetSource: "test", Processes: []ProcessState{processState("hub", p)}}
	layout(t, state, "notes.txt")
	if err := st.save(state); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	var out bytes.Buffer
	if err := Down(state, &out); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("dev down left pid %d running; it printed %q", p.PID(), out.String())
	}
	if diff := cmp.Diff([]string{"notes.txt"}, tree(t, state)); diff != "" {
		t.Errorf("left in the state folder (-want +got):\n%s", diff)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
