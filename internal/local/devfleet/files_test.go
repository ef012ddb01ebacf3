package devfleet

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// layout writes files (path relative to root: content; a path ending in "/" is a folder).
func layout(t *testing.T, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(root, f)
		if strings.HasSuffix(f, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// tree lists every file and folder under root, relative to it ("/" after folders); nil when root
// does not exist.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// fleetFiles is what up leaves in a state folder (shortened): the state file and the marked
// fleet folder with its clusters and etcd.
var fleetFiles = []string{
	StateFile,
	FleetFolder + "/" + ownerFile,
	FleetFolder + "/etcd/data/member/wal",
	FleetFolder + "/hub/admin.kubeconfig",
	FleetFolder + "/hub/logs/kube-apiserver.log",
	FleetFolder + "/gpu-east/logs/kwok.log",
}

func TestRemoveFiles(t *testing.T) {
	cases := map[string]struct {
		files    []string
		wantTree []string // nil: the state folder is gone
		wantKept []string
	}{
		"only the fleet's files: the folder goes too": {
			files: fleetFiles,
		},
		"a user's files survive, and so does the folder": {
			files:    append([]string{"notes.txt", "mine/data.csv"}, fleetFiles...),
			wantTree: []string{"mine/", "mine/data.csv", "notes.txt"},
			wantKept: []string{"mine", "notes.txt"},
		},
		"a fleet folder up did not mark is not the fleet's": {
			files:    []string{StateFile, FleetFolder + "/thesis.tex"},
			wantTree: []string{FleetFolder + "/", FleetFolder + "/thesis.tex"},
			wantKept: []string{FleetFolder},
		},
		"an empty folder": {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			layout(t, dir, tc.files...)
			layout(t, dir, "./")
			kept, err := removeFiles(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantKept, kept); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantTree, tree(t, dir)); diff != "" {
				t.Errorf("left in the state folder (-want +got):\n%s", diff)
			}
			if _, err := os.Stat(dir); (tc.wantTree == nil) != errors.Is(err, fs.ErrNotExist) {
				t.Errorf("state folder: stat err = %v, want it removed only when nothing else is in it", err)
			}
		})
	}
}

func TestDownKeepsWhatItDidNotMake(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	layout(t, dir, append([]string{"notes.txt"}, fleetFiles[1:]...)...)
	st := &State{FleetSource: "test", Processes: []ProcessState{
		// A process that no longer runs: down has nothing to stop.
		{Cluster: "hub", Component: "kube-apiserver", PID: 1 << 30, Binary: "/nonexistent/kube-apiserver"},
	}}
	if err := st.save(dir); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Down(dir, &out); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"notes.txt"}, tree(t, dir)); diff != "" {
		t.Errorf("left in the state folder (-want +got):\n%s", diff)
	}
	if !strings.Contains(out.String(), "kept, as it holds files the fleet did not make: notes.txt") {
		t.Errorf("down printed %q, want it to say the folder was kept and why", out.String())
	}
}

func TestClaimFleetFolder(t *testing.T) {
	cases := map[string]struct {
		files    []string
		wantErr  string
		wantTree []string
	}{
		"no fleet folder yet": {
			wantTree: []string{FleetFolder + "/", FleetFolder + "/" + ownerFile},
		},
		"what a failed up left is cleared": {
			files:    []string{FleetFolder + "/" + ownerFile, FleetFolder + "/hub/logs/kube-apiserver.log"},
			wantTree: []string{FleetFolder + "/", FleetFolder + "/" + ownerFile},
		},
		"a fleet folder up did not make is refused, not deleted": {
			files:    []string{FleetFolder + "/thesis.tex"},
			wantErr:  "holds fleet, which `flotilla dev up` did not make",
			wantTree: []string{FleetFolder + "/", FleetFolder + "/thesis.tex"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			layout(t, dir, tc.files...)
			got, err := claimFleetFolder(dir)
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("claimFleetFolder: err = %v, want one saying %q", err, tc.wantErr)
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			case tc.wantErr == "" && got != filepath.Join(dir, FleetFolder):
				t.Errorf("claimFleetFolder = %q, want %q", got, filepath.Join(dir, FleetFolder))
			}
			if diff := cmp.Diff(tc.wantTree, tree(t, dir)); diff != "" {
				t.Errorf("state folder (-want +got):\n%s", diff)
			}
		})
	}
}
