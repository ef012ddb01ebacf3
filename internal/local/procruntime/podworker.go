package procruntime

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podWorker runs one pod's containers as a kubelet's pod worker does: the init containers one
// after another, then the containers together, restarted by the pod's restartPolicy with an
// exponential back-off. It reports every state change through publish.
type podWorker struct {
	runner  *PodRunner
	pod     *corev1.Pod // as first seen: the spec does not change
	cancel  context.CancelFunc
	done    chan struct{}
	publish func(ctx context.Context, pod *corev1.Pod, status corev1.PodStatus)

	// pubMu orders reports: a status computed later is written later.
	pubMu     sync.Mutex
	mu        sync.Mutex
	runs      []*containerRun
	startTime metav1.Time
	grace     time.Duration
}

func newPodWorker(p *PodRunner, pod *corev1.Pod) *podWorker {
	w := &podWorker{runner: p, pod: pod.DeepCopy(), done: make(chan struct{}), publish: p.writeStatus, startTime: metav1.NewTime(p.Runtime.Clock.Now())}
	for _, list := range []struct {
		cs   []corev1.Container
		init bool
	}{{pod.Spec.InitContainers, true}, {pod.Spec.Containers, false}} {
		for _, c := range list.cs {
			w.runs = append(w.runs, &containerRun{name: c.Name, image: c.Image, init: list.init, state: waiting("PodInitializing", "")})
		}
	}
	return w
}

// start runs the pod until ctx ends (the pod is deleted) or its containers are done.
func (w *podWorker) start(ctx context.Context) {
	ctx, w.cancel = context.WithCancel(ctx)
	go func() {
		defer close(w.done)
		w.report(ctx)
		for _, r := range w.runs {
			if r.init && !w.loop(ctx, r) {
				return
			}
		}
		var wg sync.WaitGroup
		for _, r := range w.runs {
			if !r.init {
				wg.Go(func() { w.loop(ctx, r) })
			}
		}
		wg.Wait()
	}()
}

// stop ends the pod's processes, each with SIGTERM and SIGKILL after grace, and waits for the
// worker.
func (w *podWorker) stop(grace time.Duration) {
	w.mu.Lock()
	w.grace = grace
	w.mu.Unlock()
	w.cancel()
	<-w.done
}

// loop runs a container until it will not be restarted; it reports whether it ended with
// exit code 0.
func (w *podWorker) loop(ctx context.Context, r *containerRun) bool {
	backoff := w.runner.backoff()
	for {
		code, err := w.runOnce(ctx, r)
		if ctx.Err() != nil {
			return false
		}
		if err != nil {
			// The container did not start (a missing ConfigMap, an unmapped image): retried
			// whatever the restart policy, without counting a restart, as a kubelet does.
			select {
			case <-ctx.Done():
				return false
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, maxBackoff)
			continue
		}
		policy := w.pod.Spec.RestartPolicy
		if r.init && policy == corev1.RestartPolicyAlways {
			policy = corev1.RestartPolicyOnFailure // init containers run to completion
		}
		ok := code == 0
		if policy == corev1.RestartPolicyNever || (policy == corev1.RestartPolicyOnFailure && ok) {
			return ok
		}
		w.update(ctx, r, func() {
			if r.state.Terminated != nil {
				r.lastState = r.state
				r.state = waiting("CrashLoopBackOff", "back-off "+backoff.String()+" restarting the container")
			}
		})
		select {
		case <-ctx.Done():
			return false
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
		w.update(ctx, r, func() { r.restarts++ })
	}
}

// runOnce starts the container and waits for its exit; when ctx ends it stops the process with
// the pod's grace period.
func (w *podWorker) runOnce(ctx context.Context, r *containerRun) (int, error) {
	run, err := w.runner.Runtime.StartPod(ctx, w.pod, r.name)
	if err != nil {
		w.update(ctx, r, func() { r.state = waiting("CreateContainerConfigError", err.Error()) })
		return -1, err
	}
	started := metav1.NewTime(w.runner.Runtime.Clock.Now())
	w.update(ctx, r, func() {
		r.pid = run.PID()
		r.state = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}
	})
	select {
	case <-run.Done():
	case <-ctx.Done():
		w.mu.Lock()
		grace := w.grace
		w.mu.Unlock()
		run.Stop(grace)
	}
	code, _ := run.ExitCode()
	w.update(ctx, r, func() { r.state = terminated(code, started, metav1.NewTime(w.runner.Runtime.Clock.Now())) })
	return code, nil
}

// update changes a container's state and reports the pod's status; a pod being deleted is
// not reported (the runner deletes it).
func (w *podWorker) update(ctx context.Context, r *containerRun, change func()) {
	w.mu.Lock()
	change()
	w.mu.Unlock()
	w.report(ctx)
}

func (w *podWorker) report(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	w.pubMu.Lock()
	defer w.pubMu.Unlock()
	w.mu.Lock()
	st := podStatus(w.pod, w.runs, w.startTime, metav1.NewTime(w.runner.Runtime.Clock.Now()), w.runner.Runtime.address())
	w.pod.Status.Conditions = st.Conditions
	w.mu.Unlock()
	w.publish(ctx, w.pod, st)
}

// gracePeriod is the pod's deletion grace period, else its termination grace period (30 s by
// default).
func gracePeriod(pod *corev1.Pod) time.Duration {
	if s := pod.DeletionGracePeriodSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	if s := pod.Spec.TerminationGracePeriodSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return 30 * time.Second
}

// Restart back-off of a kubelet: 10 s, doubling up to 5 min.
const (
	defaultBackoff = 10 * time.Second
	maxBackoff     = 5 * time.Minute
)
