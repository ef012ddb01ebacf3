package devfleet

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// FleetFolder is the folder, in the state folder, that holds the fleet's clusters and etcd. up
// makes it and marks it with ownerFile; down removes it whole, since everything in it is the
// fleet's.
const FleetFolder = "fleet"

// ownerFile marks FleetFolder as made by up. A folder of that name without it is someone else's,
// and neither up nor down removes it.
const ownerFile = ".made-by-flotilla-dev-up"

// claimFleetFolder makes the fleet's folder in dir and marks it. A marked folder, left by an up
// that failed to start its fleet (with the logs that say why), is cleared first; an unmarked one
// is not ours, and up stops rather than delete it.
func claimFleetFolder(dir string) (string, error) {
	fleetDir := filepath.Join(dir, FleetFolder)
	switch _, err := os.Lstat(fleetDir); {
	case err == nil:
		if _, err := os.Stat(filepath.Join(fleetDir, ownerFile)); err != nil {
			return "", fmt.Errorf("the state folder %s holds %s, which `flotilla dev up` did not make (it has no %s): "+
				"move it away, or choose another --state-dir", dir, FleetFolder, ownerFile)
		}
		if err := os.RemoveAll(fleetDir); err != nil {
			return "", fmt.Errorf("clearing what a failed `flotilla dev up` left in %s: %w", fleetDir, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	if err := os.Mkdir(fleetDir, 0o755); err != nil {
		return "", err
	}
	mark := "Made by `flotilla dev up`; `flotilla dev down` removes this folder.\n"
	if err := os.WriteFile(filepath.Join(fleetDir, ownerFile), []byte(mark), 0o644); err != nil {
		return "", err
	}
	return fleetDir, nil
}

// removeFiles removes what up made in dir: the fleet's folder (if marked as the fleet's) and the
// state file, then dir itself if nothing else is left in it. It returns the other entries of
// dir, which it kept.
func removeFiles(dir string) (kept []string, err error) {
	var errs []error
	fleetDir := filepath.Join(dir, FleetFolder)
	if _, err := os.Stat(filepath.Join(fleetDir, ownerFile)); err == nil {
		errs = append(errs, os.RemoveAll(fleetDir))
	}
	for _, name := range []string{StateFile, StateFile + ".tmp"} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errors.Join(errs...)
	case err != nil:
		return nil, errors.Join(append(errs, err)...)
	}
	for _, e := range entries {
		kept = append(kept, e.Name())
	}
	sort.Strings(kept)
	if len(kept) == 0 {
		if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return kept, errors.Join(errs...)
}

// recordedBinary is the path to record for a process started from binary: resolved, so that
// Running recognizes the process from any folder and whatever links led to the binary.
func recordedBinary(binary string) string {
	if resolved, err := localk8s.ResolveBinary(binary); err == nil {
		return resolved
	}
	if abs, err := filepath.Abs(binary); err == nil {
		return abs
	}
	return binary
}
