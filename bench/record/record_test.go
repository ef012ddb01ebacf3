package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriteAndRead(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(DirEnv, dir)
	r := New("bench-x")
	if r.Commit == "" || r.Machine.Cores < 1 || r.Machine.MemoryBytes <= 0 {
		t.Errorf("New: commit %q, machine %+v: want a commit, cores and memory", r.Commit, r.Machine)
	}
	if _, err := r.Write(); err == nil || !strings.Contains(err.Error(), "no figures") {
		t.Errorf("Write without figures: %v, want an error saying it has no figures", err)
	}
	r.Param("clusters", 5)
	r.Add(Flotilla, "ready", 1.5, "s", 1)
	path, err := r.Write()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != dir || !strings.HasPrefix(filepath.Base(path), "bench-x-") || !strings.HasSuffix(path, r.Commit+".json") {
		t.Errorf("path %s, want %s/bench-x-<date>-%s.json", path, dir, r.Commit)
	}
	got, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Record{*r}, got); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
	if err := os.WriteFile(filepath.Join(dir, "empty.json"), []byte(`{"bench":"bench-x","figures":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDir(dir); err == nil {
		t.Error("ReadDir accepted a record without figures")
	}
}
