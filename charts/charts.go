package charts

import (
	"embed"
	"fmt"
	"io/fs"
	"path"

	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	chartloader "helm.sh/helm/v4/pkg/chart/v2/loader"
)

// Names of the charts.
const (
	Hub   = "flotilla-hub"
	Agent = "flotilla-agent"
)

//go:embed all:flotilla-hub all:flotilla-agent
var files embed.FS

// Load reads the embedded chart name (Hub or Agent).
func Load(name string) (*chartv2.Chart, error) {
	if name != Hub && name != Agent {
		return nil, fmt.Errorf("no chart %q: Flotilla has %s and %s", name, Hub, Agent)
	}
	var buffered []*archive.BufferedFile
	err := fs.WalkDir(files, name, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := relative(name, p)
		buffered = append(buffered, &archive.BufferedFile{Name: rel, Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the embedded chart %s: %w", name, err)
	}
	ch, err := chartloader.LoadFiles(buffered)
	if err != nil {
		return nil, fmt.Errorf("loading the embedded chart %s: %w", name, err)
	}
	return ch, nil
}

func relative(root, p string) (string, bool) {
	prefix := path.Clean(root) + "/"
	if len(p) > len(prefix) && p[:len(prefix)] == prefix {
		return p[len(prefix):], true
	}
	return p, false
}
