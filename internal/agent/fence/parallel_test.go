package fence

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/contract/fencing"
)

var workloads = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}

// newMultiKueueFleet is a spoke running n Jobs MultiKueue created, each with its Workload and
// one pod; the Workloads are controlled by their Jobs, as Kueue makes them, when owned.
func newMultiKueueFleet(t *testing.T, n int, owned bool) *fleet {
	t.Helper()
	mc := gpu1()
	hub := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(mc.DeepCopy()).WithStatusSubresource(&clusterv1.ManagedCluster{}).Build()
	mk := map[string]string{fencing.LabelMultiKueueOrigin: "flotilla"}
	var objs, pods []runtime.Object
	for i := range n {
		name := fmt.Sprintf("job-%03d", i)
		wl := object("kueue.x-k8s.io/v1beta2", "Workload", "job-"+name, mk, nil, map[string]any{})
		if owned {
			wl.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: name, UID: types.UID("uid-" + name), Controller: ptr.To(true)}})
		}
		objs = append(objs, object("batch/v1", "Job", name, mk, nil, map[string]any{}), wl)
		pods = append(pods, jobPod("ml", name+"-0", name, nil, true))
	}
	kube := kubefake.NewClientset(pods...)
	// Events are only recorded: the fake's tracker is slow at creating hundreds of them.
	kube.PrependReactor("create", "events", func(clienttesting.Action) (bool, runtime.Object, error) { return true, nil, nil })
	return spokeFleet(t, hub, mc, objs, kube)
}

// A fence over hundreds of jobs stops them all in one look: every Workload is deactivated before
// any Job is suspended (Kueue would start a suspended Job again while its Workload stays
// admitted), the pods are found with one list of the spoke whatever the number of Jobs, and every
// pod is hurried. The healed condition says how long the fence took.
func TestFenceStopsHundredsInOneLook(t *testing.T) {
	const n = 300
	fl := newMultiKueueFleet(t, n, false)
	var mu sync.Mutex
	var updates []string // the resource of each update, in order
	fl.dyn.PrependReactor("update", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		updates = append(updates, a.GetResource().Resource)
		return false, nil, nil
	})
	podLists := 0
	fl.kube.PrependReactor("list", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		podLists++
		return false, nil, nil
	})
	graces := fl.podGraces()
	fl.step(t)
	fl.clk.SetTime(t0.Add(20 * time.Second))
	fl.step(t)

	if len(updates) != 2*n {
		t.Fatalf("%d updates, want %d (every Workload and every Job)", len(updates), 2*n)
	}
	for i, r := range updates {
		if want := map[bool]string{true: "workloads", false: "jobs"}[i < n]; r != want {
			t.Fatalf("update %d is of %s, want %s: every Workload goes before any Job", i, r, want)
		}
	}
	if podLists != 1 {
		t.Errorf("%d lists of pods for %d Jobs, want 1", podLists, n)
	}
	wantGraces := map[string]int64{}
	for i := range n {
		wantGraces[fmt.Sprintf("job-%03d-0", i)] = 5
	}
	mu.Lock()
	if diff := cmp.Diff(wantGraces, graces); diff != "" {
		t.Errorf("grace periods of the deleted pods (-want +got):\n%s", diff)
	}
	mu.Unlock()
	for _, r := range []schema.GroupVersionResource{jobs, workloads} {
		l, err := fl.dyn.Resource(r).Namespace("ml").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range l.Items {
			if _, ok, _ := fencing.StoppedOf(&o); !ok {
				t.Errorf("%s %s not stopped", o.GetKind(), o.GetName())
			}
		}
	}

	// A second look while still cut off finds nothing left to do.
	updates, podLists = nil, 0
	fl.clk.SetTime(t0.Add(21 * time.Second))
	fl.step(t)
	if len(updates) != 0 || podLists != 0 {
		t.Errorf("the second look made %d updates and %d lists of pods, want none", len(updates), podLists)
	}

	fl.clk.SetTime(t0.Add(24 * time.Second))
	fl.agent.renewed = fl.clk.Now()
	fl.step(t)
	mc := &clusterv1.ManagedCluster{}
	if err := fl.hub.Get(context.Background(), client.ObjectKey{Name: "gpu-1"}, mc); err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(mc.Status.Conditions, fencing.ConditionWorkloadsFenced)
	if c == nil || !strings.Contains(c.Message, "all stopped 0s after the fence") || !strings.Contains(c.Message, fmt.Sprintf("%d workloads stopped, %d resumed", 2*n, 2*n)) {
		t.Errorf("WorkloadsFenced = %+v, want how long the fence took and %d stopped and resumed", c, 2*n)
	}
}

// Kueue on the spoke suspends a Job as soon as the fence deactivates its Workload, so the fence's
// own update of the Job often meets a conflict: it reads the Job again, finds it suspended, and
// hurries its pods in the same look, without an error (which would back the fence off).
func TestFenceStopMeetsKueuesSuspend(t *testing.T) {
	fl := newMultiKueueFleet(t, 1, false)
	fl.dyn.PrependReactor("update", "jobs", func(a clienttesting.Action) (bool, runtime.Object, error) {
		// Kueue got there first: the Job is suspended, at a newer resourceVersion.
		job := a.(clienttesting.UpdateAction).GetObject().(*unstructured.Unstructured).DeepCopy()
		_ = unstructured.SetNestedField(job.Object, true, "spec", "suspend")
		job.SetAnnotations(nil)
		if err := fl.dyn.Tracker().Update(jobs, job, "ml"); err != nil {
			t.Fatal(err)
		}
		return true, nil, apierrors.NewConflict(jobs.GroupResource(), job.GetName(), fmt.Errorf("the object has been modified"))
	})
	graces := fl.podGraces()
	fl.step(t)
	fl.clk.SetTime(t0.Add(20 * time.Second))
	fl.step(t) // fails the test on an error
	if diff := cmp.Diff(map[string]int64{"job-000-0": 5}, graces); diff != "" {
		t.Errorf("grace periods of the deleted pods (-want +got):\n%s", diff)
	}
	if fl.f.raised.Held.IsZero() {
		t.Error("the fence is not held after one look")
	}
}

// A Job whose Workload the fence deactivated is left to Kueue until Kueue has evicted the
// Workload: suspended while Kueue still holds the Workload admitted in its cache, Kueue would
// start it again. Kueue suspends it itself once it evicts; the fence hurries its pods then. Past
// kueueGrace, or kueueMargin before the fence's deadline if that comes first, the fence suspends
// a Job Kueue has not (Kueue may be down), and only then is the fence held.
func TestFenceLeavesKueuesJobsToKueue(t *testing.T) {
	fl := newMultiKueueFleet(t, 2, true)
	var jobUpdates []string
	fl.dyn.PrependReactor("update", "jobs", func(a clienttesting.Action) (bool, runtime.Object, error) {
		jobUpdates = append(jobUpdates, a.(clienttesting.UpdateAction).GetObject().(*unstructured.Unstructured).GetName())
		return false, nil, nil
	})
	var events []string
	fl.kube.PrependReactor("create", "events", func(a clienttesting.Action) (bool, runtime.Object, error) {
		ev := a.(clienttesting.CreateAction).GetObject().(*corev1.Event)
		events = append(events, ev.InvolvedObject.Name)
		return true, nil, nil
	})
	graces := fl.podGraces()
	fl.step(t)
	fl.clk.SetTime(t0.Add(20 * time.Second))
	fl.step(t)
	if len(jobUpdates) != 0 || len(graces) != 0 {
		t.Fatalf("the first look updated Jobs %v and deleted pods %v; want both left to Kueue", jobUpdates, graces)
	}
	if len(events) != 0 {
		t.Errorf("Events %v written before the fence holds; want them once it does, so as not to slow its looks", events)
	}
	if !fl.f.raised.Held.IsZero() {
		t.Fatal("held while Kueue has not stopped the Jobs")
	}

	// Kueue evicts job-000's Workload and suspends the Job.
	kueueEvicts(t, fl, "job-000")
	fl.clk.SetTime(t0.Add(21 * time.Second))
	fl.step(t)
	if diff := cmp.Diff(map[string]int64{"job-000-0": 4}, graces); diff != "" {
		t.Errorf("after Kueue suspended job-000, grace periods of the deleted pods (-want +got):\n%s", diff)
	}
	if len(jobUpdates) != 0 || !fl.f.raised.Held.IsZero() {
		t.Fatalf("within the grace left to Kueue: Jobs updated %v, held %v; want none and not held", jobUpdates, fl.f.raised.Held)
	}

	// Kueue never evicts job-001's: the fence suspends it itself, kueueMargin before its
	// deadline (L 30 s less the 5 s skew bound), which comes before kueueGrace has passed.
	fl.clk.SetTime(t0.Add(23 * time.Second))
	if !t0.Add(20 * time.Second).Add(kueueGrace).After(t0.Add(23 * time.Second)) {
		t.Fatalf("kueueGrace %s no longer reaches past the deadline less kueueMargin: this test would not show the cap", kueueGrace)
	}
	fl.step(t)
	if diff := cmp.Diff([]string{"job-001"}, jobUpdates); diff != "" {
		t.Errorf("Jobs the fence suspended (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int64{"job-000-0": 4, "job-001-0": 2}, graces); diff != "" {
		t.Errorf("grace periods of the deleted pods (-want +got):\n%s", diff)
	}
	if fl.f.raised.Held.IsZero() {
		t.Error("not held once every Job is suspended")
	}
	// Held: the Events of everything the fence stopped (both Workloads, and the Job it suspended
	// itself; Kueue suspended the other).
	sort.Strings(events)
	if diff := cmp.Diff([]string{"job-001", "job-job-000", "job-job-001"}, events); diff != "" {
		t.Errorf("Events once held (-want +got):\n%s", diff)
	}
}

// kueueEvicts does what Kueue on the spoke does with a deactivated Workload: Evicted=True on
// the Workload, and its Job suspended.
func kueueEvicts(t *testing.T, fl *fleet, job string) {
	t.Helper()
	ctx := context.Background()
	wl, err := fl.dyn.Resource(workloads).Namespace("ml").Get(ctx, "job-"+job, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wl.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Evicted", "status": "True", "reason": "Deactivated"}}}
	if err := fl.dyn.Tracker().Update(workloads, wl, "ml"); err != nil {
		t.Fatal(err)
	}
	j, err := fl.dyn.Resource(jobs).Namespace("ml").Get(ctx, job, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(j.Object, true, "spec", "suspend"); err != nil {
		t.Fatal(err)
	}
	if err := fl.dyn.Tracker().Update(jobs, j, "ml"); err != nil {
		t.Fatal(err)
	}
}

// Kueue gets kueueGrace from each Workload's own deactivation, not from the fence's start: with
// hundreds of Workloads, deactivating them all takes seconds, and a Job suspended right after
// its Workload would be started again by Kueue.
func TestKueueGraceCountsFromTheDeactivation(t *testing.T) {
	fl := newMultiKueueFleet(t, 1, true)
	// A LostAfter far enough that the fence's deadline does not cut Kueue's grace short.
	fl.agent.mc.Annotations[fencing.AnnotationTiming] = fencing.Timing{Lease: 5 * time.Second, FenceAfter: 20 * time.Second, LostAfter: time.Minute}.String()
	var jobUpdates int
	fl.dyn.PrependReactor("update", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		switch a.GetResource().Resource {
		case "workloads":
			fl.clk.Step(5 * time.Second) // a slow deactivation
		case "jobs":
			jobUpdates++
		}
		return false, nil, nil
	})
	fl.step(t)
	fl.clk.SetTime(t0.Add(20 * time.Second))
	deactivated := t0.Add(25 * time.Second)
	fl.step(t) // the Workload is deactivated at 25 s
	fl.clk.SetTime(deactivated.Add(kueueGrace - time.Second))
	fl.step(t)
	if jobUpdates != 0 {
		t.Fatalf("the Job was suspended %s after its Workload's deactivation; Kueue has %s", kueueGrace-time.Second, kueueGrace)
	}
	fl.clk.SetTime(deactivated.Add(kueueGrace))
	fl.step(t)
	if jobUpdates != 1 {
		t.Fatalf("%d updates of the Job %s after its Workload's deactivation, want 1", jobUpdates, kueueGrace)
	}
}
