package realnode

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupRoot is where the v1 hierarchies are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// hierarchies are the mounted cgroup v1 hierarchies (cpu, memory, pids, the named systemd one,
// ...), without the unified (v2) mount a hybrid system also has.
func hierarchies() ([]string, error) {
	entries, err := os.ReadDir(cgroupRoot)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "unified" {
			continue
		}
		p := filepath.Join(cgroupRoot, e.Name())
		if _, err := os.Stat(filepath.Join(p, "cgroup.procs")); err == nil {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no cgroup v1 hierarchy under %s: a real node here needs cgroups v1 (the kubelet runs with failCgroupV1: false)", cgroupRoot)
	}
	return out, nil
}

// joinCgroup makes group (a path below the node's cgroup) in every hierarchy and moves pid into it.
func joinCgroup(group string, pid int) error {
	hs, err := hierarchies()
	if err != nil {
		return err
	}
	for _, h := range hs {
		dir := filepath.Join(h, group)
		if err := mkCgroup(h, group); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("moving pid %d into cgroup %s: %w", pid, dir, err)
		}
	}
	return nil
}

// mkCgroup creates group in hierarchy h one level at a time. A new cpuset cgroup has no CPUs and
// no memory nodes, and refuses processes until it has: each level takes its parent's.
func mkCgroup(h, group string) error {
	dir := h
	for _, part := range strings.Split(strings.Trim(group, "/"), "/") {
		parent := dir
		dir = filepath.Join(dir, part)
		if err := os.Mkdir(dir, 0o755); err != nil {
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			return fmt.Errorf("creating cgroup %s: %w", dir, err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			v, err := os.ReadFile(filepath.Join(parent, f))
			if err != nil {
				continue // not the cpuset hierarchy
			}
			if err := os.WriteFile(filepath.Join(dir, f), v, 0o644); err != nil {
				return fmt.Errorf("cgroup %s: setting %s: %w", dir, f, err)
			}
		}
	}
	return nil
}

// cgroupPIDs lists every process in the tree of group, in every hierarchy.
func cgroupPIDs(group string) (map[int]bool, error) {
	hs, err := hierarchies()
	if err != nil {
		return nil, err
	}
	pids := map[int]bool{}
	for _, h := range hs {
		err := filepath.WalkDir(filepath.Join(h, group), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if d.IsDir() || d.Name() != "cgroup.procs" {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return nil // the cgroup went while we walked
			}
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil {
					pids[pid] = true
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return pids, nil
}

// killCgroup kills every process in the tree of group and waits until none is left: the node's
// containerd, its shims and containers, its kubelet. New processes cannot appear once their
// parents are dead, so a few rounds end it.
func killCgroup(group string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pids, err := cgroupPIDs(group)
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v of cgroup %s still run %s after SIGKILL", sortedKeys(pids), group, timeout)
		}
		for pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// removeCgroup removes the tree of group from every hierarchy, deepest first (rmdir of an empty
// cgroup is how the kernel deletes one).
func removeCgroup(group string) error {
	hs, err := hierarchies()
	if err != nil {
		return err
	}
	var errs []error
	for _, h := range hs {
		var dirs []string
		_ = filepath.WalkDir(filepath.Join(h, group), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}

// unmountUnder detaches every mount at or below each of roots, deepest first: containers'
// root filesystems, pods' volumes and network namespaces.
func unmountUnder(roots ...string) error {
	mounts, err := mountPoints()
	if err != nil {
		return err
	}
	var under []string
	for _, m := range mounts {
		for _, r := range roots {
			if m == r || strings.HasPrefix(m, r+"/") {
				under = append(under, m)
				break
			}
		}
	}
	sort.Slice(under, func(i, j int) bool { return len(under[i]) > len(under[j]) })
	var errs []error
	for _, m := range under {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", m, err))
		}
	}
	return errors.Join(errs...)
}

// mountPoints lists this mount namespace's mount points from /proc/self/mountinfo.
func mountPoints() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 {
			out = append(out, unescapeMount(fields[4]))
		}
	}
	return out, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, ...).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
