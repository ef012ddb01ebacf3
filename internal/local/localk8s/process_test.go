package localk8s

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestStartProcessWith checks that the process sees only the given environment and directory, and
// that its exit code is reported: a plain exit as is, a signal as 128 plus its number.
func TestStartProcessWith(t *testing.T) {
	cases := map[string]struct {
		script   string
		stop     bool
		wantCode int
		wantLog  string
	}{
		"exit code and environment": {script: `echo "$GREETING $(pwd) ${HOME:-nohome}"; exit 3`, wantCode: 3, wantLog: "hi DIR nohome\n"},
		"stopped by SIGTERM":        {script: `echo started; exec sleep 60`, stop: true, wantCode: 143, wantLog: "started\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			log := filepath.Join(dir, "out.log")
			p, err := StartProcessWith(ProcessOptions{
				Name: "test/sh", Binary: "/bin/sh", Args: []string{"-c", tc.script}, LogPath: log,
				Env: []string{"GREETING=hi"}, Dir: dir,
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, exited := p.ExitCode(); exited && tc.stop {
				t.Fatal("ExitCode reports an exit before the process was stopped")
			}
			if tc.stop {
				waitForLog(t, log)
				p.Stop(5 * time.Second)
			}
			select {
			case <-p.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the process did not exit")
			}
			code, exited := p.ExitCode()
			if !exited || code != tc.wantCode {
				t.Errorf("ExitCode() = %d, %t; want %d, true", code, exited, tc.wantCode)
			}
			data, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.ReplaceAll(tc.wantLog, "DIR", dir)
			if diff := cmp.Diff(want, string(data)); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
		})
	}
}

func waitForLog(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if st, err := os.Stat(path); err == nil && st.Size() > 0 {
			return
		}
	}
	t.Fatalf("%s stayed empty", path)
}
