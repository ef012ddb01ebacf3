package procruntime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ServiceAccountDir is where a kubelet mounts a pod's service-account token, CA and namespace,
// and where client-go's in-cluster configuration reads them.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// automountVolume names the volume of the automounted service-account token, as the API
// server's admission names it kube-api-access-<suffix>.
const automountVolume = "kube-api-access"

// mount is one of the container's volume mounts, resolved.
type mount struct {
	path    string // the mountPath, cleaned
	volume  string
	subPath string // subPath or expanded subPathExpr
	// source is the volume; nil for the automounted service-account volume.
	source *corev1.Volume
}

// mounts resolves the container's volumeMounts (and the automounted service account) against the
// pod's volumes.
func (s *start) mounts(ctx context.Context, v *vars) ([]mount, error) {
	var out []mount
	for i, vm := range s.c.VolumeMounts {
		field := fmt.Sprintf("volumeMounts[%d] (%s)", i, vm.Name)
		vol := findVolume(&s.pod.Spec, vm.Name)
		if vol == nil {
			return nil, fmt.Errorf("%s: the pod has no volume %q in spec.volumes", field, vm.Name)
		}
		if !filepath.IsAbs(vm.MountPath) || filepath.Clean(vm.MountPath) == "/" {
			return nil, fmt.Errorf("%s: mountPath %q must be an absolute path other than /", field, vm.MountPath)
		}
		sub := vm.SubPath
		if vm.SubPathExpr != "" {
			if sub != "" {
				return nil, fmt.Errorf("%s: subPath and subPathExpr are both set; keep one", field)
			}
			sub = expand(vm.SubPathExpr, v.lookup())
		}
		if sub != "" && !relativeInside(sub) {
			return nil, fmt.Errorf("%s: subPath %q must be a relative path without '..'", field, sub)
		}
		out = append(out, mount{path: filepath.Clean(vm.MountPath), volume: vm.Name, subPath: sub, source: vol})
	}
	auto, err := s.automount(ctx)
	if err != nil {
		return nil, err
	}
	if auto {
		out = append(out, mount{path: ServiceAccountDir, volume: s.automountVolumeName()})
	}
	return out, nil
}

func findVolume(spec *corev1.PodSpec, name string) *corev1.Volume {
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == name {
			return &spec.Volumes[i]
		}
	}
	return nil
}

// automountVolumeName is kube-api-access, with a suffix if the pod has a volume of that name.
func (s *start) automountVolumeName() string {
	name := automountVolume
	for i := 0; findVolume(&s.pod.Spec, name) != nil; i++ {
		name = fmt.Sprintf("%s-%d", automountVolume, i)
	}
	return name
}

// relativeInside reports whether p is a relative path that stays inside its folder.
func relativeInside(p string) bool {
	if p == "" || filepath.IsAbs(p) {
		return false
	}
	return !slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..")
}

// mountPaths are the container paths that the runtime rewrites in args and env values.
func mountPaths(mounts []mount) []string {
	out := make([]string, 0, len(mounts))
	for _, m := range mounts {
		out = append(out, m.path)
	}
	return out
}

// rewrite turns a container path in a command-line argument or env value into its place under
// the pod's fs folder: the whole argument when it starts with a mount path, else the part after
// its first '=' (--flag=/path). A mount path matches itself and paths below it, not a longer
// name (/etc/config does not match /etc/configs).
func (s *start) rewrite(arg string, prefixes []string) string {
	if underAny(arg, prefixes) {
		return s.fsPath(arg)
	}
	if name, val, ok := strings.Cut(arg, "="); ok && underAny(val, prefixes) {
		return name + "=" + s.fsPath(val)
	}
	return arg
}

func underAny(p string, prefixes []string) bool {
	for _, pre := range prefixes {
		if p == pre || strings.HasPrefix(p, pre+"/") {
			return true
		}
	}
	return false
}

// link makes each mount path a symbolic link to its volume's folder (or subPath in it), parents
// first so that a mount inside another lands in the outer volume as it would be seen through a
// kubelet's mounts. A link or file left by an earlier start is replaced.
func (s *start) link(mounts []mount) error {
	if err := os.MkdirAll(filepath.Join(s.dir, fsDir), 0o755); err != nil {
		return err
	}
	sorted := slices.Clone(mounts)
	slices.SortStableFunc(sorted, func(a, b mount) int { return len(a.path) - len(b.path) })
	for _, m := range sorted {
		target := filepath.Join(s.volumeDir(m.volume), m.subPath)
		if m.subPath != "" {
			if _, err := os.Lstat(target); os.IsNotExist(err) {
				// The kubelet creates a missing subPath as a folder.
				if err := os.MkdirAll(target, 0o755); err != nil {
					return fmt.Errorf("volume %s: subPath %s: %w", m.volume, m.subPath, err)
				}
			}
		}
		at := s.fsPath(m.path)
		if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
			return fmt.Errorf("volume %s: mountPath %s: %w", m.volume, m.path, err)
		}
		if err := os.RemoveAll(at); err != nil {
			return fmt.Errorf("volume %s: mountPath %s: removing what an earlier start left: %w", m.volume, m.path, err)
		}
		if err := os.Symlink(target, at); err != nil {
			return fmt.Errorf("volume %s: mountPath %s: %w", m.volume, m.path, err)
		}
	}
	return nil
}

func (s *start) volumeDir(name string) string { return filepath.Join(s.dir, volumesDir, name) }
