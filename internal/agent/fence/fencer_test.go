package fence

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/api/scheme"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/contract/fencing"
)

var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

// fakeAgent is the registration agent as the fencer sees it.
type fakeAgent struct {
	renewed time.Time
	mc      *clusterv1.ManagedCluster
}

func (a *fakeAgent) LastRenewed() time.Time             { return a.renewed }
func (a *fakeAgent) Cluster() *clusterv1.ManagedCluster { return a.mc }

type fakeHub struct{ c *registration.HubClients }

func (h fakeHub) Current() *registration.HubClients { return h.c }
func (h fakeHub) Changed() <-chan struct{}          { return make(chan struct{}) }

func object(apiVersion, kind, name string, labels, annotations map[string]string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "spec": spec}}
	u.SetName(name)
	u.SetNamespace("ml")
	u.SetUID(types.UID("uid-" + typesUID(name)))
	u.SetLabels(labels)
	u.SetAnnotations(annotations)
	return u
}

func typesUID(s string) string { return strings.ReplaceAll(s, "/", "-") }

// fleet is one spoke's objects and its hub, as the fencer reaches them.
type fleet struct {
	clk   *clocktesting.FakeClock
	agent *fakeAgent
	hub   client.Client
	dyn   *dynamicfake.FakeDynamicClient
	kube  *kubefake.Clientset
	f     *Fencer
}

var (
	jobs        = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

func newFleet(t *testing.T, works ...*workv1.ManifestWork) *fleet {
	t.Helper()
	mc := gpu1()
	b := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(mc.DeepCopy()).WithStatusSubresource(&clusterv1.ManagedCluster{})
	for _, w := range works {
		b = b.WithObjects(w)
	}
	hub := b.Build()
	fenced := map[string]string{fencing.LabelFenced: "true"}
	mk := map[string]string{fencing.LabelMultiKueueOrigin: "flotilla"}
	objs := []runtime.Object{
		object("batch/v1", "Job", "train", fenced, map[string]string{fencing.AnnotationWork: "train"}, map[string]any{}),
		object("batch/v1", "Job", "orphan", fenced, map[string]string{fencing.AnnotationWork: "gone"}, map[string]any{}),
		object("batch/v1", "Job", "mk-job", mk, nil, map[string]any{}),
		object("batch/v1", "Job", "not-fenced", nil, nil, map[string]any{}),
		object("apps/v1", "Deployment", "trainer", fenced, map[string]string{fencing.AnnotationWork: "train"}, map[string]any{"replicas": int64(2)}),
		object("apps/v1", "Deployment", "serve", nil, nil, map[string]any{"replicas": int64(3)}),
	}
	finished := object("batch/v1", "Job", "mk-done", mk, nil, map[string]any{})
	finished.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Complete", "status": "True"}}}
	objs = append(objs, finished)
	// Pods of the fenced Job train (one asking a 2 s grace period), of the unfenced Job, and one
	// that carries train's label but is not train's.
	pod := func(name, job string, grace *int64, owned bool) *corev1.Pod {
		return jobPod("ml", name, job, grace, owned)
	}
	// posing-elsewhere names train's UID as its controller, from another namespace: an owner
	// reference never crosses namespaces, so it cannot be train's.
	kube := kubefake.NewClientset(pod("train-0", "train", nil, true), pod("train-1", "train", ptr.To[int64](2), true),
		pod("other-0", "not-fenced", nil, true), pod("posing-0", "train", nil, false), jobPod("other", "posing-elsewhere", "train", nil, true))
	return spokeFleet(t, hub, mc, objs, kube)
}

// gpu1 is the ManagedCluster of the tests' spoke, fenced with the default timing, at epoch 2.
func gpu1() *clusterv1.ManagedCluster {
	return &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1",
		Annotations: map[string]string{fencing.AnnotationTiming: fencing.Default.String(), fencing.AnnotationEpoch: "2"}}}
}

// spokeFleet is a fencer of the spoke holding objs (its fenced kinds, read through the dynamic
// client) and kube's objects, with the hub of ManagedCluster mc, the agent's last renewal at t0.
func spokeFleet(t *testing.T, hub client.Client, mc *clusterv1.ManagedCluster, objs []runtime.Object, kube *kubefake.Clientset) *fleet {
	t.Helper()
	listKinds := map[schema.GroupVersionResource]string{}
	for _, k := range fencing.Kinds {
		listKinds[k.GroupVersionResource] = strings.TrimSuffix(strings.ToUpper(k.Resource[:1])+k.Resource[1:], "s") + "List"
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, objs...)
	clk := clocktesting.NewFakeClock(t0)
	agent := &fakeAgent{renewed: t0, mc: mc}
	f := newFencer(Options{ClusterName: "gpu-1", Agent: agent, Hub: fakeHub{c: &registration.HubClients{Client: hub}},
		Spoke: &rest.Config{}, Clock: clk, Log: testr.New(t)}, dyn, kube)
	return &fleet{clk: clk, agent: agent, hub: hub, dyn: dyn, kube: kube, f: f}
}

// jobPod is a running pod of the Job named job (UID "uid-"+job), controlled by it when owned.
func jobPod(ns, name, job string, grace *int64, owned bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name),
		Labels: map[string]string{"batch.kubernetes.io/controller-uid": "uid-" + job}},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: grace}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if owned {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job, UID: types.UID("uid-" + job), Controller: ptr.To(true)}}
	}
	return p
}

// podGraces records the grace period of each pod the fence deletes, by pod name (-1: none given).
func (fl *fleet) podGraces() map[string]int64 {
	graces := map[string]int64{}
	fl.kube.PrependReactor("delete", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		d := a.(clienttesting.DeleteActionImpl)
		graces[d.Name] = ptr.Deref(d.DeleteOptions.GracePeriodSeconds, -1)
		return false, nil, nil
	})
	return graces
}

func (fl *fleet) step(t *testing.T) time.Duration {
	t.Helper()
	next, err := fl.f.Step(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// state is what the spoke's objects look like: suspend for Jobs, replicas for Deployments, or
// "gone".
func (fl *fleet) state(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, r := range []schema.GroupVersionResource{jobs, deployments} {
		l, err := fl.dyn.Resource(r).Namespace("ml").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range l.Items {
			s := "running"
			if sus, _, _ := unstructured.NestedBool(o.Object, "spec", "suspend"); sus {
				s = "suspended"
			}
			if n, found, _ := unstructured.NestedInt64(o.Object, "spec", "replicas"); found && n == 0 {
				s = "scaled to 0"
			}
			out[o.GetName()] = s
		}
	}
	return out
}

var allRunning = map[string]string{"train": "running", "orphan": "running", "mk-job": "running", "mk-done": "running",
	"not-fenced": "running", "trainer": "running", "serve": "running"}

var fencedState = map[string]string{"train": "suspended", "orphan": "suspended", "mk-job": "suspended", "mk-done": "running",
	"not-fenced": "running", "trainer": "scaled to 0", "serve": "running"}

func TestShortOutageChangesNothing(t *testing.T) {
	fl := newFleet(t)
	fl.step(t) // the sweep at start finds nothing stopped
	fl.clk.SetTime(t0.Add(19 * time.Second))
	fl.step(t)
	if fl.f.Fenced() {
		t.Fatal("fenced 19s after the last renewal; the fence is at 20s")
	}
	fl.agent.renewed = t0.Add(19 * time.Second)
	fl.clk.SetTime(t0.Add(38 * time.Second))
	fl.step(t)
	if diff := cmp.Diff(allRunning, fl.state(t)); diff != "" {
		t.Errorf("after an outage shorter than the fence (-want +got):\n%s", diff)
	}
}

func TestFenceBetweenFAndLResumesInPlace(t *testing.T) {
	fl := newFleet(t)
	fl.step(t)
	fl.clk.SetTime(t0.Add(20 * time.Second))
	fl.step(t)
	if !fl.f.Fenced() {
		t.Fatal("not fenced 20s after the last renewal")
	}
	if diff := cmp.Diff(fencedState, fl.state(t)); diff != "" {
		t.Errorf("fenced (-want +got):\n%s", diff)
	}
	// The link returns 22s in: the hub, at 30s, has not declared the cluster lost.
	fl.clk.SetTime(t0.Add(22 * time.Second))
	fl.agent.renewed = fl.clk.Now()
	fl.step(t)
	if fl.f.Fenced() {
		t.Fatal("still fenced after a renewal")
	}
	if diff := cmp.Diff(allRunning, fl.state(t)); diff != "" {
		t.Errorf("after the link returned with the epoch unchanged (-want +got):\n%s", diff)
	}
	mc := &clusterv1.ManagedCluster{}
	if err := fl.hub.Get(context.Background(), client.ObjectKey{Name: "gpu-1"}, mc); err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(mc.Status.Conditions, fencing.ConditionWorkloadsFenced)
	if c == nil || c.Reason != "Healed" || !strings.Contains(c.Message, "4 workloads stopped, 4 resumed, 0 removed") {
		t.Errorf("WorkloadsFenced = %+v, want Healed with 4 stopped and 4 resumed", c)
	}
}

func TestDeclaredLostRemovesWhatRunsElsewhere(t *testing.T) {
	train := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "gpu-1"}}
	fl := newFleet(t, train)
	fl.step(t)
	fl.clk.SetTime(t0.Add(20 * time.Second))
	fl.step(t)
	// The hub declares the cluster lost at 30s and raises the epoch.
	mc := &clusterv1.ManagedCluster{}
	if err := fl.hub.Get(context.Background(), client.ObjectKey{Name: "gpu-1"}, mc); err != nil {
		t.Fatal(err)
	}
	mc.Annotations[fencing.AnnotationEpoch] = "3"
	if err := fl.hub.Update(context.Background(), mc); err != nil {
		t.Fatal(err)
	}
	fl.clk.SetTime(t0.Add(90 * time.Second))
	fl.agent.renewed = fl.clk.Now()
	fl.step(t)
	want := map[string]string{
		"train": "running", "trainer": "running", // their work is still the cluster's
		"orphan":     "suspended", // its work is gone: the work agent removes it
		"mk-done":    "running",   // finished: its status must reach the hub
		"not-fenced": "running", "serve": "running",
	} // mk-job is gone: MultiKueue dispatched it elsewhere
	if diff := cmp.Diff(want, fl.state(t)); diff != "" {
		t.Errorf("after the link returned with the epoch raised (-want +got):\n%s", diff)
	}
}

func TestRenewalNearLostWaitsForTheHub(t *testing.T) {
	fl := newFleet(t)
	fl.step(t)
	fl.clk.SetTime(t0.Add(20 * time.Second))
	fl.step(t)
	// A renewal at 27s: within the skew bound of the hub's 30s, which may be declaring right now.
	fl.clk.SetTime(t0.Add(27 * time.Second))
	fl.agent.renewed = fl.clk.Now()
	if next := fl.step(t); next != 8*time.Second || !fl.f.Fenced() {
		t.Fatalf("step = %s, fenced %v; want to wait 8s (until 35s) still fenced", next, fl.f.Fenced())
	}
	fl.clk.SetTime(t0.Add(35 * time.Second))
	fl.step(t)
	if fl.f.Fenced() {
		t.Fatal("still fenced after the hub's decision settled")
	}
	if diff := cmp.Diff(allRunning, fl.state(t)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestNoTimingNoFence(t *testing.T) {
	fl := newFleet(t)
	delete(fl.agent.mc.Annotations, fencing.AnnotationTiming)
	fl.step(t)
	fl.clk.SetTime(t0.Add(time.Hour))
	fl.step(t)
	if fl.f.Fenced() {
		t.Fatal("fenced a cluster without a Timing")
	}
}

func TestCutOffPastLossRemovesMultiKueueCopies(t *testing.T) {
	fl := newFleet(t)
	fl.step(t)
	fl.clk.SetTime(t0.Add(20 * time.Second))
	fl.step(t)
	fl.clk.SetTime(t0.Add(34 * time.Second))
	fl.step(t)
	if diff := cmp.Diff(fencedState, fl.state(t)); diff != "" {
		t.Errorf("before L + the skew bound (-want +got):\n%s", diff)
	}
	fl.clk.SetTime(t0.Add(35 * time.Second))
	fl.step(t)
	want := map[string]string{"train": "suspended", "orphan": "suspended", "mk-done": "running",
		"not-fenced": "running", "trainer": "scaled to 0", "serve": "running"} // mk-job is gone
	if diff := cmp.Diff(want, fl.state(t)); diff != "" {
		t.Errorf("still cut off at L + the skew bound (-want +got):\n%s", diff)
	}
	if !fl.f.Fenced() {
		t.Error("the fence came down without a renewal")
	}
}

// The fence deletes a suspended Job's pods with a grace period that ends before the hub may start
// the Job elsewhere (L less the clock-skew bound), or the pod's own when shorter: the Job
// controller would give them their own (30 s by default), past the loss.
func TestFenceHurriesTheSuspendedJobsPods(t *testing.T) {
	fl := newFleet(t)
	graces := fl.podGraces()
	fl.step(t)
	fl.clk.SetTime(t0.Add(20 * time.Second)) // F: the fence stops train
	fl.step(t)
	// L = 30 s after the last renewal, less 5 s of clock skew: 5 s left.
	if diff := cmp.Diff(map[string]int64{"train-0": 5, "train-1": 2}, graces); diff != "" {
		t.Errorf("grace periods of the deleted pods (-want +got):\n%s", diff)
	}
}

// Kueue on the spoke suspends a Job itself once the fence deactivates its Workload, and may do
// it before the fence does: the Job's pods are hurried all the same. A pod already going before
// the fence's deadline is left as it is.
func TestFenceHurriesPodsOfAJobSuspendedByOthers(t *testing.T) {
	fl := newFleet(t)
	train, err := fl.dyn.Resource(jobs).Namespace("ml").Get(context.Background(), "train", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(train.Object, true, "spec", "suspend"); err != nil {
		t.Fatal(err)
	}
	if _, err := fl.dyn.Resource(jobs).Namespace("ml").Update(context.Background(), train, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	soon, _ := fl.kube.CoreV1().Pods("ml").Get(context.Background(), "train-1", metav1.GetOptions{})
	soon.DeletionTimestamp = &metav1.Time{Time: t0.Add(22 * time.Second)} // within the fence's 5 s
	if _, err := fl.kube.CoreV1().Pods("ml").Update(context.Background(), soon, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	graces := fl.podGraces()
	fl.step(t)
	fl.clk.SetTime(t0.Add(20 * time.Second))
	fl.step(t)
	if diff := cmp.Diff(map[string]int64{"train-0": 5}, graces); diff != "" {
		t.Errorf("grace periods of the deleted pods (-want +got):\n%s", diff)
	}
}
