package procruntime

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// defaultFileMode is the mode of a volume's files when the volume sets no defaultMode (the API
// server's default, 0644).
const defaultFileMode = 0o644

// file is one file of a volume, by its path relative to the volume's folder.
type file struct {
	data []byte
	mode os.FileMode
	// token, when set, is renewed in place while the container runs.
	token *tokenSpec
}

// materialize writes each mounted volume's files and links the mount paths to them.
func (s *start) materialize(ctx context.Context, mounts []mount) error {
	done := map[string]bool{}
	for _, m := range mounts {
		if done[m.volume] {
			continue
		}
		done[m.volume] = true
		if err := s.volume(ctx, m); err != nil {
			return fmt.Errorf("volume %s: %w", m.volume, err)
		}
	}
	return s.link(mounts)
}

func (s *start) volume(ctx context.Context, m mount) error {
	dir := s.volumeDir(m.volume)
	if m.source == nil {
		files, err := s.automountFiles(ctx)
		if err != nil {
			return err
		}
		return s.writeVolume(dir, files)
	}
	v := m.source.VolumeSource
	switch {
	case v.EmptyDir != nil:
		// An emptyDir outlives its containers' restarts and is shared by the pod's containers.
		return os.MkdirAll(dir, 0o755)
	case v.Secret != nil:
		files := map[string]file{}
		if err := s.secretFiles(ctx, files, v.Secret.SecretName, v.Secret.Items, isTrue(v.Secret.Optional), mode(v.Secret.DefaultMode), "secret"); err != nil {
			return err
		}
		return s.writeVolume(dir, files)
	case v.ConfigMap != nil:
		files := map[string]file{}
		if err := s.configMapFiles(ctx, files, v.ConfigMap.Name, v.ConfigMap.Items, isTrue(v.ConfigMap.Optional), mode(v.ConfigMap.DefaultMode), "configMap"); err != nil {
			return err
		}
		return s.writeVolume(dir, files)
	case v.DownwardAPI != nil:
		files := map[string]file{}
		if err := s.downwardAPIFiles(files, v.DownwardAPI.Items, mode(v.DownwardAPI.DefaultMode), "downwardAPI"); err != nil {
			return err
		}
		return s.writeVolume(dir, files)
	case v.Projected != nil:
		files, err := s.projectedFiles(ctx, v.Projected)
		if err != nil {
			return err
		}
		return s.writeVolume(dir, files)
	}
	return fmt.Errorf("the process runtime supports secret, configMap, emptyDir, projected and downwardAPI volumes; change the volume's type or do not mount it in this container")
}

// mode is a volume's defaultMode, or the API server's default.
func mode(m *int32) os.FileMode {
	if m == nil {
		return defaultFileMode
	}
	return os.FileMode(*m) & os.ModePerm
}

func itemMode(m *int32, def os.FileMode) os.FileMode {
	if m == nil {
		return def
	}
	return os.FileMode(*m) & os.ModePerm
}

// keyFiles adds data's keys as files: all of them when items is empty, else each item's key at
// its path. An item's missing key is an error unless the source is optional.
func keyFiles(files map[string]file, data map[string][]byte, items []corev1.KeyToPath, optional bool, def os.FileMode, field string) error {
	if len(items) == 0 {
		for k, v := range data {
			if err := addFile(files, k, file{data: v, mode: def}, field); err != nil {
				return err
			}
		}
		return nil
	}
	for i, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if optional {
				continue
			}
			return fmt.Errorf("%s.items[%d]: no key %q; add it or set optional: true", field, i, it.Key)
		}
		if err := addFile(files, it.Path, file{data: v, mode: itemMode(it.Mode, def)}, fmt.Sprintf("%s.items[%d]", field, i)); err != nil {
			return err
		}
	}
	return nil
}

func addFile(files map[string]file, path string, f file, field string) error {
	if !relativeInside(path) {
		return fmt.Errorf("%s: path %q must be a relative path without '..'", field, path)
	}
	files[filepath.Clean(path)] = f
	return nil
}

func (s *start) secretFiles(ctx context.Context, files map[string]file, name string, items []corev1.KeyToPath, optional bool, def os.FileMode, field string) error {
	sec, err := s.objects.secret(ctx, name)
	if err != nil {
		return fmt.Errorf("%s: reading Secret %s: %w", field, name, err)
	}
	if sec == nil {
		if optional {
			return nil
		}
		return fmt.Errorf("%s: Secret %s/%s not found; create it or set optional: true", field, s.pod.Namespace, name)
	}
	return keyFiles(files, secretData(sec), items, optional, def, field)
}

func (s *start) configMapFiles(ctx context.Context, files map[string]file, name string, items []corev1.KeyToPath, optional bool, def os.FileMode, field string) error {
	cm, err := s.objects.configMap(ctx, name)
	if err != nil {
		return fmt.Errorf("%s: reading ConfigMap %s: %w", field, name, err)
	}
	if cm == nil {
		if optional {
			return nil
		}
		return fmt.Errorf("%s: ConfigMap %s/%s not found; create it or set optional: true", field, s.pod.Namespace, name)
	}
	return keyFiles(files, configMapData(cm), items, optional, def, field)
}

func (s *start) downwardAPIFiles(files map[string]file, items []corev1.DownwardAPIVolumeFile, def os.FileMode, field string) error {
	for i, it := range items {
		f := fmt.Sprintf("%s.items[%d]", field, i)
		var val string
		var err error
		switch {
		case it.FieldRef != nil:
			val, err = fieldValue(s.pod, it.FieldRef.FieldPath, s.r.address())
		case it.ResourceFieldRef != nil:
			var c *corev1.Container
			if c, err = findContainer(&s.pod.Spec, it.ResourceFieldRef.ContainerName); err == nil {
				val, err = resourceValue(c, it.ResourceFieldRef, s.r.nodeAllocatable())
			}
		default:
			err = fmt.Errorf("neither fieldRef nor resourceFieldRef is set")
		}
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if err := addFile(files, it.Path, file{data: []byte(val), mode: itemMode(it.Mode, def)}, f); err != nil {
			return err
		}
	}
	return nil
}

func (s *start) projectedFiles(ctx context.Context, p *corev1.ProjectedVolumeSource) (map[string]file, error) {
	def := mode(p.DefaultMode)
	files := map[string]file{}
	for i, src := range p.Sources {
		field := fmt.Sprintf("projected.sources[%d]", i)
		var err error
		switch {
		case src.Secret != nil:
			err = s.secretFiles(ctx, files, src.Secret.Name, src.Secret.Items, isTrue(src.Secret.Optional), def, field+".secret")
		case src.ConfigMap != nil:
			err = s.configMapFiles(ctx, files, src.ConfigMap.Name, src.ConfigMap.Items, isTrue(src.ConfigMap.Optional), def, field+".configMap")
		case src.DownwardAPI != nil:
			err = s.downwardAPIFiles(files, src.DownwardAPI.Items, def, field+".downwardAPI")
		case src.ServiceAccountToken != nil:
			err = s.tokenFile(ctx, files, src.ServiceAccountToken, def, field+".serviceAccountToken")
		default:
			err = fmt.Errorf("%s: only secret, configMap, downwardAPI and serviceAccountToken sources are supported", field)
		}
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

// writeVolume replaces a volume's folder with files. Token files are registered for renewal.
func (s *start) writeVolume(dir string, files map[string]file) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		f := files[name]
		path := filepath.Join(dir, name)
		if err := writeFileAtomic(path, f.data, f.mode); err != nil {
			return err
		}
		if f.token != nil {
			f.token.path = path
			f.token.mode = f.mode
			s.tokens.add(f.token)
		}
	}
	return nil
}

// writeFileAtomic writes a file through a temporary file and a rename, so that a reader (a client
// re-reading its token) sees the old or the new content, never a part.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := firstErr(werr, cerr, os.Chmod(tmp.Name(), mode)); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *Runtime) nodeAllocatable() corev1.ResourceList {
	if r.allocatable != nil {
		return r.allocatable
	}
	return hostAllocatable(r.Root)
}
