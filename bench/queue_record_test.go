//go:build integration

package bench

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	toolscache "k8s.io/client-go/tools/cache"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/flotilla/flotilla/internal/core/queuesim"
	"github.com/flotilla/flotilla/internal/local/localk8s"
)

// qJob is what the phase saw of one job: its submission, and its hub Workload's times.
type qJob struct {
	trace                                queuesim.Job
	name, ns                             string
	submit, reserved, admitted, finished time.Time
	// worker is the worker that admitted it (the hub Workload's status.clusterName).
	worker string
	// evictions are the times its hub Workload was evicted (Evicted=True), by reason: a
	// preemption to give a team its fair share throws away the work done so far.
	evictions map[string]map[time.Time]bool
}

// qPod is one pod of the phase's jobs on a worker, with the times the watch saw it change.
type qPod struct {
	job, ns, worker         string
	gpus                    int64
	created, running, ended time.Time
	unschedulable           bool
}

// recorder watches the hub's Workloads and the workers' pods of one phase. Times are when the
// watch delivered the change (the objects' own timestamps are whole seconds).
type recorder struct {
	prefix string
	mu     sync.Mutex
	jobs   map[string]*qJob // ns/name
	pods   map[string]*qPod // worker/ns/name
}

func (r *recorder) job(ns, name string) *qJob { return r.jobs[ns+"/"+name] }

// watch starts the watches; they end with ctx.
func (f *qFleet) watch(ctx context.Context, b *testing.B, r *recorder) {
	w, err := f.hub.Watch(ctx, &kueuev1beta2.WorkloadList{})
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			wl, ok := ev.Object.(*kueuev1beta2.Workload)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			now := time.Now()
			name := ""
			for _, o := range wl.OwnerReferences {
				name = o.Name
			}
			r.mu.Lock()
			if j := r.job(wl.Namespace, name); j != nil {
				if j.reserved.IsZero() && meta.IsStatusConditionTrue(wl.Status.Conditions, kueuev1beta2.WorkloadQuotaReserved) {
					j.reserved = now
				}
				if j.admitted.IsZero() && wl.Status.ClusterName != nil {
					j.admitted, j.worker = now, *wl.Status.ClusterName
				}
				if j.finished.IsZero() && meta.IsStatusConditionTrue(wl.Status.Conditions, kueuev1beta2.WorkloadFinished) {
					j.finished = now
				}
				if c := meta.FindStatusCondition(wl.Status.Conditions, kueuev1beta2.WorkloadEvicted); c != nil && c.Status == metav1.ConditionTrue {
					if j.evictions == nil {
						j.evictions = map[string]map[time.Time]bool{}
					}
					if j.evictions[c.Reason] == nil {
						j.evictions[c.Reason] = map[time.Time]bool{}
					}
					j.evictions[c.Reason][c.LastTransitionTime.Time] = true
				}
			}
			r.mu.Unlock()
		}
	}()
	for _, name := range f.names[1:] {
		fac := informers.NewSharedInformerFactory(f.cs[name], 0)
		inf := fac.Core().V1().Pods().Informer()
		on := func(obj any, deleted bool) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			p, ok := obj.(*corev1.Pod)
			job := p.Labels["batch.kubernetes.io/job-name"]
			if !ok || !strings.HasPrefix(job, r.prefix+"-") {
				return
			}
			now := time.Now()
			r.mu.Lock()
			defer r.mu.Unlock()
			key := name + "/" + p.Namespace + "/" + p.Name
			rec := r.pods[key]
			if rec == nil {
				rec = &qPod{job: job, ns: p.Namespace, worker: name, created: now}
				for _, c := range p.Spec.Containers {
					if q, ok := c.Resources.Requests[localk8s.GPUResource]; ok {
						rec.gpus += q.Value()
					}
				}
				r.pods[key] = rec
			}
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
					rec.unschedulable = true
				}
			}
			switch {
			case p.Status.Phase == corev1.PodRunning && rec.running.IsZero():
				rec.running = now
			case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || deleted:
				if rec.ended.IsZero() {
					rec.ended = now
					if rec.running.IsZero() && p.Status.Phase == corev1.PodSucceeded {
						rec.running = now // Running and Succeeded in one update: a run too short to see
					}
				}
			}
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { on(o, false) },
			UpdateFunc: func(_, o any) { on(o, false) },
			DeleteFunc: func(o any) { on(o, true) },
		}); err != nil {
			b.Fatal(err)
		}
		fac.Start(ctx.Done())
		if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			b.Fatalf("worker %s: pods not synced", name)
		}
	}
}

// replay submits the trace's jobs at their compressed times, waits until every one has
// finished, and measures the phase.
func (f *qFleet) replay(b *testing.B, pr progress, ph phase, jobs []queuesim.Job, compress float64, teams []queuesim.Team) *phaseResult {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	r := &recorder{prefix: ph.prefix, jobs: map[string]*qJob{}, pods: map[string]*qPod{}}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	f.watch(wctx, b, r)
	before := f.writes(ctx, b)
	pr.printf("phase %s: replaying %d jobs", ph.name, len(jobs))
	start := time.Now()
	for _, j := range jobs {
		job := qJobSpec(ph.prefix, j, compress)
		if d := time.Until(start.Add(time.Duration(j.Submit / compress * float64(time.Second)))); d > 0 {
			time.Sleep(d)
		}
		r.mu.Lock()
		r.jobs[job.Namespace+"/"+job.Name] = &qJob{trace: j, name: job.Name, ns: job.Namespace, submit: time.Now()}
		r.mu.Unlock()
		if err := f.hub.Create(ctx, job); err != nil {
			b.Fatalf("submitting %s/%s: %v", job.Namespace, job.Name, err)
		}
	}
	pr.printf("phase %s: %d jobs submitted in %s; waiting for them to finish", ph.name, len(jobs), time.Since(start).Round(100*time.Millisecond))
	var last string
	lastSay := time.Now()
	err := poll(ctx, 15*time.Minute, func() (bool, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		done, onWorker := 0, 0
		for _, j := range r.jobs {
			if !j.finished.IsZero() {
				done++
			}
			if !j.admitted.IsZero() {
				onWorker++
			}
		}
		last = fmt.Sprintf("%d of %d jobs finished, %d admitted on a worker", done, len(jobs), onWorker)
		if time.Since(lastSay) > 30*time.Second {
			pr.printf("phase %s: %s", ph.name, last)
			lastSay = time.Now()
		}
		return done == len(jobs), nil
	})
	if err != nil {
		b.Fatalf("phase %s: %v (%s; fleet logs in %s)", ph.name, err, last, f.dir)
	}
	// The last pods' Succeeded reach the watch about when the hub marks the workload finished.
	time.Sleep(2 * time.Second)
	after := f.writes(ctx, b)
	stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	res := measure(ph, r, teams, after-before)
	pr.printf("phase %s: done in %s: %s", ph.name, time.Since(start).Round(100*time.Millisecond), res.summary())
	return res
}

// mutatingVerbs are the verbs apiserver_request_total counts that write.
// APPLY is a server-side apply (a PATCH of type apply), which the API server counts as a verb of its own.
var mutatingVerbs = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "APPLY": true, "DELETE": true, "DELETECOLLECTION": true}

// writes is the mutating requests every API server of the fleet has served so far
// (apiserver_request_total on its /metrics, read with the admin kubeconfig).
func (f *qFleet) writes(ctx context.Context, b *testing.B) float64 {
	var sum float64
	for _, name := range f.names {
		raw, err := f.cs[name].CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			b.Fatalf("cluster %s: reading /metrics: %v", name, err)
		}
		n, err := mutatingRequests(raw)
		if err != nil {
			b.Fatalf("cluster %s: %v", name, err)
		}
		sum += n
	}
	return sum
}

// mutatingRequests sums apiserver_request_total over the mutating verbs in a Prometheus text
// exposition.
func mutatingRequests(raw []byte) (float64, error) {
	var sum float64
	seen := false
	err := promSamples(bytes.NewReader(raw), func(name string, l map[string]string, v float64) {
		if name != "apiserver_request_total" {
			return
		}
		seen = true
		if mutatingVerbs[l["verb"]] {
			sum += v
		}
	})
	if err != nil {
		return 0, err
	}
	if !seen {
		return 0, fmt.Errorf("/metrics has no apiserver_request_total")
	}
	return sum, nil
}
