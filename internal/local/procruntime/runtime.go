package procruntime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// Runtime runs pods' containers as local processes.
type Runtime struct {
	// Root is the folder under which each pod's files are written, Root/<namespace>/<pod>/.
	Root string
	// Commands maps a container image (the exact reference, or its repository without tag or
	// digest) to the local executable that stands for the image's entry point.
	Commands map[string]string
	// Client reaches the cluster the pods belong to: it reads their ConfigMaps, Secrets and
	// ServiceAccounts and requests their tokens.
	Client kubernetes.Interface
	// Server is where in-cluster clients of the processes connect: its Host and CA (CAData or
	// CAFile) are written to each pod's kubeconfig and KUBERNETES_SERVICE_HOST/PORT.
	Server *rest.Config
	// Clock decides when projected tokens are renewed.
	Clock clock.PassiveClock
	// Address is the node's and its pods' IP address, a loopback address (127.0.0.1 when
	// empty). Giving each cluster's runtime its own (127.0.2.1, 127.0.2.2, ...) lets the same
	// port be served once per cluster, as on separate machines; see network.go.
	Address string
	// Env is set in every process, as an image's ENV would be, unless the container sets it.
	Env map[string]string

	// allocatable, when set, replaces this machine's resources as the node's allocatable ones
	// (unset limits in resourceFieldRef); tests set it.
	allocatable corev1.ResourceList
}

// Layout of a pod's folder, Root/<namespace>/<pod>/.
const (
	// fsDir holds the container's view of its mounts: mountPath P is fsDir/P, a symbolic link
	// to the volume's folder (or to the subPath in it).
	fsDir = "fs"
	// volumesDir holds each volume's files in volumesDir/<volume name>.
	volumesDir = "volumes"
	// logsDir holds each container's output in logsDir/<container>.log.
	logsDir = "logs"
	// kubeconfigFile is the kubeconfig the runtime writes for the pod's service account.
	kubeconfigFile = "kubeconfig"
)

// Start materializes and starts container (by name; "" is the first) of a pod spec in namespace
// ns, as the kubelet would for a pod of that name and spec, with its files under Root. The pod
// has no labels, annotations or uid; StartPod takes a whole pod.
func (r *Runtime) Start(ctx context.Context, ns, podName string, spec corev1.PodSpec, container string) (*Running, error) {
	return r.StartPod(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: podName}, Spec: spec}, container)
}

// StartPod is Start for a pod with its metadata: labels and annotations for the downward API, and
// a uid that binds the pod's service-account tokens to it (a pod that exists in the cluster; a
// token bound to a pod the API server does not have is refused, so a pod built from a template
// must leave the uid empty).
func (r *Runtime) StartPod(ctx context.Context, pod *corev1.Pod, container string) (*Running, error) {
	if pod.Namespace == "" || pod.Name == "" {
		return nil, fmt.Errorf("process runtime: a pod needs a namespace and a name (got %q/%q)", pod.Namespace, pod.Name)
	}
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	c, err := findContainer(&pod.Spec, container)
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	run, err := r.newStart(pod, c).run(ctx)
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s: container %s: %w", pod.Namespace, pod.Name, c.Name, err)
	}
	return run, nil
}

func (r *Runtime) newStart(pod *corev1.Pod, c *corev1.Container) *start {
	return &start{
		r:       r,
		pod:     pod,
		c:       c,
		objects: newObjects(r.Client, pod.Namespace),
		dir:     r.podDir(pod.Namespace, pod.Name),
		tokens:  &tokens{client: r.Client, clock: r.Clock},
	}
}

// PodDir is the folder of a pod's files: Root/<namespace>/<pod>.
func (r *Runtime) PodDir(ns, podName string) string { return r.podDir(ns, podName) }

func (r *Runtime) podDir(ns, podName string) string {
	root, err := filepath.Abs(r.Root)
	if err != nil {
		root = r.Root
	}
	return filepath.Join(root, ns, podName)
}

func (r *Runtime) check() error {
	var errs []error
	if r.Root == "" {
		errs = append(errs, errors.New("Runtime.Root is empty; set it to a folder for the pods' files"))
	}
	if r.Client == nil {
		errs = append(errs, errors.New("Runtime.Client is nil; set it to a client of the pods' cluster"))
	}
	if r.Server == nil || r.Server.Host == "" {
		errs = append(errs, errors.New("Runtime.Server has no Host; set it to the API server the processes connect to"))
	}
	if r.Clock == nil {
		errs = append(errs, errors.New("Runtime.Clock is nil; set it (clock.RealClock{} outside tests)"))
	}
	return errors.Join(errs...)
}

// start is one container start in progress.
type start struct {
	r       *Runtime
	pod     *corev1.Pod
	c       *corev1.Container
	objects *objects
	dir     string // the pod's folder
	tokens  *tokens
}

func (s *start) run(ctx context.Context) (*Running, error) {
	vars, err := s.env(ctx)
	if err != nil {
		return nil, err
	}
	argv, err := s.command(vars)
	if err != nil {
		return nil, err
	}
	mounts, err := s.mounts(ctx, vars)
	if err != nil {
		return nil, err
	}
	if err := s.materialize(ctx, mounts); err != nil {
		return nil, err
	}
	env, err := s.processEnv(vars, mounts)
	if err != nil {
		return nil, err
	}
	prefixes := mountPaths(mounts)
	net := s.r.network(ctx)
	for i := 1; i < len(argv); i++ {
		argv[i] = net.rewrite(s.rewrite(argv[i], prefixes))
	}
	for i, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[i] = k + "=" + net.rewrite(v)
		}
	}
	workDir, err := s.workingDir()
	if err != nil {
		return nil, err
	}
	proc, err := localk8s.StartProcessWith(localk8s.ProcessOptions{
		Name:    s.pod.Namespace + "/" + s.pod.Name + "/" + s.c.Name,
		Binary:  argv[0],
		Args:    argv[1:],
		LogPath: filepath.Join(s.dir, logsDir, s.c.Name+".log"),
		Env:     env,
		Dir:     workDir,
	})
	if err != nil {
		return nil, err
	}
	return newRunning(s, proc, argv, env), nil
}

// workingDir is the container's workingDir under the pod's fs folder, else the pod's folder.
func (s *start) workingDir() (string, error) {
	if s.c.WorkingDir == "" {
		return s.dir, nil
	}
	if !filepath.IsAbs(s.c.WorkingDir) {
		return "", fmt.Errorf("workingDir %q is not an absolute path", s.c.WorkingDir)
	}
	dir := s.fsPath(s.c.WorkingDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("workingDir %q: %w", s.c.WorkingDir, err)
	}
	return dir, nil
}

// fsPath is where the container's absolute path p is on this machine.
func (s *start) fsPath(p string) string { return filepath.Join(s.dir, fsDir, filepath.Clean(p)) }

// tokenCheckPeriod is how often a running container's projected tokens are checked for renewal;
// the Clock decides whether each is due.
const tokenCheckPeriod = 30 * time.Second
