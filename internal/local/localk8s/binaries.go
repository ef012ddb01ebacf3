package localk8s

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Versions of the components tools/build.sh builds.
const (
	KubernetesVersion = "v1.37.2"
	KwokVersion       = "v0.8.0"
)

// BinDirEnv names the environment variable that points at a folder of built binaries; `make`
// sets it from tools/build.sh.
const BinDirEnv = "FLOTILLA_K8S_BIN"

// Names of the files in a binaries folder.
const (
	EtcdBin              = "etcd"
	APIServerBin         = "kube-apiserver"
	ControllerManagerBin = "kube-controller-manager"
	SchedulerBin         = "kube-scheduler"
	KubectlBin           = "kubectl"
	KwokBin              = "kwok"
	KwokStagesFile       = "kwok-stages.yaml"
	// KubeletBin, KubeProxyBin and PauseBin make a real node (internal/local/realnode); PauseBin
	// is the sandbox container's program (tools/cmd/pause).
	KubeletBin   = "kubelet"
	KubeProxyBin = "kube-proxy"
	PauseBin     = "pause"
)

var allBinaries = []string{EtcdBin, APIServerBin, ControllerManagerBin, SchedulerBin, KubectlBin, KwokBin, KwokStagesFile, KubeletBin, KubeProxyBin, PauseBin}

// Binaries is a folder holding the built Kubernetes binaries.
type Binaries struct{ Dir string }

// Path is the path of one binary.
func (b Binaries) Path(name string) string { return filepath.Join(b.Dir, name) }

// Check reports, in one error, every binary the folder lacks and how to build them.
func (b Binaries) Check() error {
	var missing []string
	for _, name := range allBinaries {
		if _, err := os.Stat(b.Path(name)); err != nil {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the Kubernetes binaries folder %s lacks %s: run `make k8s-bin` (tools/build.sh) to build them",
			b.Dir, strings.Join(missing, ", "))
	}
	return nil
}

var errNoBinaries = errors.New("no Kubernetes binaries found")

// FindBinaries locates the built binaries: the folder named by $FLOTILLA_K8S_BIN, else the newest
// complete build of KubernetesVersion in the user cache folder that tools/build.sh writes to.
func FindBinaries() (Binaries, error) {
	if dir := os.Getenv(BinDirEnv); dir != "" {
		b := Binaries{Dir: dir}
		return b, b.Check()
	}
	root := os.Getenv("FLOTILLA_CACHE_DIR")
	if root == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return Binaries{}, fmt.Errorf("%w: set %s to the folder tools/build.sh printed", errNoBinaries, BinDirEnv)
		}
		root = filepath.Join(cache, "flotilla")
	}
	matches, _ := filepath.Glob(filepath.Join(root, "k8s-"+KubernetesVersion+"-kwok-"+KwokVersion+"-*", "bin"))
	type found struct {
		b   Binaries
		mod int64
	}
	var complete []found
	for _, m := range matches {
		b := Binaries{Dir: m}
		if b.Check() != nil {
			continue
		}
		st, err := os.Stat(b.Path(APIServerBin))
		if err != nil {
			continue
		}
		complete = append(complete, found{b, st.ModTime().UnixNano()})
	}
	if len(complete) == 0 {
		return Binaries{}, fmt.Errorf("%w for Kubernetes %s under %s: run `make k8s-bin` (tools/build.sh) or set %s",
			errNoBinaries, KubernetesVersion, root, BinDirEnv)
	}
	sort.Slice(complete, func(i, j int) bool { return complete[i].mod > complete[j].mod })
	return complete[0].b, nil
}
