//go:build integration

package chaos

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// spokeWatch follows a spoke's Jobs and the pods of jobs (label "job") from when it is made, with
// one informer of each: an informer lists again when the API server ends its watch, so a watch
// dropped under load (hundreds of jobs moving at once) never leaves a record stale, and two
// watches for all jobs load the spoke's API server far less than two for each job.
type spokeWatch struct {
	mu sync.Mutex
	// resumed counts each Job's changes from suspended to not (by name).
	resumed map[string]int
	// existing are the pods present when the watch started; created counts the others by job.
	existing map[types.UID]bool
	created  map[string]int
	// lives are what the watch saw of each job's pods, removed ones included (podLife).
	lives map[string]map[types.UID]podLife
	// history is what happened to each job's pods, a line per change, for a failure's message.
	history map[string][]string
}

// onPod is an informer handler that calls f with the pod, under the watch's lock.
func (w *spokeWatch) onPod(f func(p *corev1.Pod)) func(obj any) {
	return func(obj any) {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		f(p)
	}
}

// note adds a line to the job's history: when the watch saw it, the pod, and what.
func (w *spokeWatch) note(p *corev1.Pod, what string) {
	job := p.Labels["job"]
	if p.DeletionTimestamp != nil {
		what += fmt.Sprintf(" (deletionTimestamp %s, grace %ds)", p.DeletionTimestamp.Format("15:04:05"), ptr.Deref(p.DeletionGracePeriodSeconds, -1))
	}
	w.history[job] = append(w.history[job], time.Now().Format("15:04:05.000")+" "+p.Name+" "+what)
}

// historyOf is the job's history, a line each.
func (w *spokeWatch) historyOf(job string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.history[job], "; ")
}

// watchSpoke starts following s's Jobs and pods, until the test ends.
func watchSpoke(t *testing.T, s *fenced) *spokeWatch {
	t.Helper()
	w := &spokeWatch{resumed: map[string]int{}, existing: map[types.UID]bool{}, created: map[string]int{},
		lives: map[string]map[types.UID]podLife{}, history: map[string][]string{}}
	stop := make(chan struct{})
	jobs := informers.NewSharedInformerFactory(s.Spoke.Client, 0)
	jobInf := jobs.Batch().V1().Jobs().Informer()
	jobReg, err := jobInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(oldObj, newObj any) {
		o, ok1 := oldObj.(*batchv1.Job)
		n, ok2 := newObj.(*batchv1.Job)
		if ok1 && ok2 && ptr.Deref(o.Spec.Suspend, false) && !ptr.Deref(n.Spec.Suspend, false) {
			w.mu.Lock()
			w.resumed[n.Name]++
			w.mu.Unlock()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	pods := informers.NewSharedInformerFactoryWithOptions(s.Spoke.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "job" }))
	podInf := pods.Core().V1().Pods().Informer()
	synced := false
	reg, err := podInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: w.onPod(func(p *corev1.Pod) {
			job := p.Labels["job"]
			if !synced {
				w.existing[p.UID] = true
			} else if !w.existing[p.UID] {
				w.created[job]++
			}
			if w.lives[job] == nil {
				w.lives[job] = map[types.UID]podLife{}
			}
			w.lives[job][p.UID] = lifeOf(podLife{}, p, time.Now())
			w.note(p, "seen "+string(p.Status.Phase))
		}),
		UpdateFunc: func(_, obj any) {
			w.onPod(func(p *corev1.Pod) {
				was, ok := w.lives[p.Labels["job"]][p.UID]
				if !ok {
					return
				}
				now := lifeOf(was, p, time.Now())
				if now != was {
					w.lives[p.Labels["job"]][p.UID] = now
					w.note(p, string(p.Status.Phase))
				}
			})(obj)
		},
		DeleteFunc: w.onPod(func(p *corev1.Pod) {
			job := p.Labels["job"]
			l := lifeOf(w.lives[job][p.UID], p, time.Now())
			l.removed = time.Now()
			if w.lives[job] == nil {
				w.lives[job] = map[types.UID]podLife{}
			}
			w.lives[job][p.UID] = l
			w.note(p, "removed")
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	jobs.Start(stop)
	pods.Start(stop)
	if !toolscache.WaitForCacheSync(stop, jobReg.HasSynced, reg.HasSynced) {
		t.Fatalf("the watches of %s's Jobs and pods did not sync", s.Name)
	}
	w.mu.Lock()
	synced = true
	w.mu.Unlock()
	t.Cleanup(func() { close(stop); jobs.Shutdown(); pods.Shutdown() })
	return w
}

// stale says how many times the Job was resumed and how many of its pods were created since
// the watch started.
func (w *spokeWatch) stale(job string) (resumed, created int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.resumed[job], w.created[job]
}

// rerunOf says how the job's start on another worker at start relates to its pods here
// (classify), and when the last of them that stopped did.
func (w *spokeWatch) rerunOf(job string, start time.Time) (rerun, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var pods []podLife
	for _, l := range w.lives[job] {
		pods = append(pods, l)
	}
	return classify(pods, start)
}
