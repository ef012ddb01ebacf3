package procruntime

import (
	"context"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// Running is a container started by the runtime.
type Running struct {
	pod       string // namespace/name
	container corev1.Container
	proc      *localk8s.Process
	dir       string
	argv      []string
	env       []string
	tokens    *tokens

	stopOnce    sync.Once
	stopRenewal context.CancelFunc
}

func newRunning(s *start, proc *localk8s.Process, argv, env []string) *Running {
	ctx, cancel := context.WithCancel(context.Background())
	r := &Running{
		pod:         s.pod.Namespace + "/" + s.pod.Name,
		container:   *s.c.DeepCopy(),
		proc:        proc,
		dir:         s.dir,
		argv:        argv,
		env:         env,
		tokens:      s.tokens,
		stopRenewal: cancel,
	}
	go r.renewTokens(ctx)
	return r
}

// renewTokens renews the container's tokens when due, until it exits or is stopped. Failures
// are retried at the next check; the token in the file stays valid until its expiry.
func (r *Running) renewTokens(ctx context.Context) {
	if len(r.tokens.list) == 0 {
		return
	}
	t := time.NewTicker(tokenCheckPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.proc.Done():
			return
		case <-t.C:
			_ = r.RenewTokens(ctx)
		}
	}
}

// RenewTokens renews the container's service-account tokens that are at 80% of their lifetime
// by the runtime's Clock, as the kubelet does; the runtime calls it every 30 seconds.
func (r *Running) RenewTokens(ctx context.Context) error { return r.tokens.renew(ctx) }

// Stop sends SIGTERM to the process (and its children), then SIGKILL after grace, and waits for
// the exit.
func (r *Running) Stop(grace time.Duration) {
	r.stopOnce.Do(r.stopRenewal)
	r.proc.Stop(grace)
}

// Done is closed when the process has exited.
func (r *Running) Done() <-chan struct{} { return r.proc.Done() }

// ExitCode is the process's exit code (128 plus the signal's number when a signal ended it) and
// true once it has exited; false while it runs.
func (r *Running) ExitCode() (int, bool) { return r.proc.ExitCode() }

// LogPath is the file holding the container's stdout and stderr: Root/<ns>/<pod>/logs/<container>.log.
func (r *Running) LogPath() string { return r.proc.LogPath }

// Args is the process's argv: the local executable, then the container's command (without its
// first word) and args, expanded and with container paths rewritten.
func (r *Running) Args() []string { return slices.Clone(r.argv) }

// Env is the process's whole environment, "NAME=value" sorted by name.
func (r *Running) Env() []string { return slices.Clone(r.env) }

// Dir is the pod's folder, Root/<ns>/<pod>; the container's path P is Dir()/fs/P.
func (r *Running) Dir() string { return r.dir }

// PID is the process's id.
func (r *Running) PID() int { return r.proc.PID() }

// Container is the container spec the process was started from, as a record of what the
// runtime does not enforce (its securityContext, resources and probes).
func (r *Running) Container() corev1.Container { return *r.container.DeepCopy() }

// Pod is the pod's namespace/name.
func (r *Running) Pod() string { return r.pod }
