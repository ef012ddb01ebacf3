//go:build integration

package chaos

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	failoverv1alpha1 "github.com/flotilla/flotilla/api/failover/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla/flotilla/api/work/v1alpha1"
	"github.com/flotilla/flotilla/internal/agent/fence"
	"github.com/flotilla/flotilla/internal/agent/loop"
	"github.com/flotilla/flotilla/internal/agent/registration"
	"github.com/flotilla/flotilla/internal/agent/work"
	"github.com/flotilla/flotilla/internal/contract/fencing"
	"github.com/flotilla/flotilla/internal/hub/clusterset"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// The fencing timing of these tests: short enough to run in a minute, with the rule's margin
// (30 >= 8 + 2 + 5) and a wide window between the fence and the loss, so that a healed link's
// first renewal (TCP retransmits with back-off once the packets pass again) lands inside it.
const (
	fenceLease = 2
	fenceAfter = 8
	lostAfter  = 30
)

// fenced is a spoke joined through its link, with a work agent and a fence.
type fenced struct {
	*testenv.Joined
	fence *fence.Fencer
	// stopWork stops the spoke's work agent; startWork starts a new one.
	stopWork func()
	// stopFence stops the fence's loop.
	stopFence func()
	// t is the test that started the agents: a work agent started again runs until it ends, not
	// until the end of the subtest that started it again.
	t *testing.T
}

// startWork runs a work agent on s, with s's fence, until stopWork or the end of the test that
// started s's agents.
func (s *fenced) startWork() {
	t := s.t
	t.Helper()
	w, err := work.New(work.Options{ClusterName: s.Name, AgentID: "agent-" + s.Name, Hub: s.Agent.Hub(), Spoke: s.Spoke.RESTConfig(),
		Resync: 2 * time.Second, Fence: s.fence, Log: testr.New(t).WithName("work-" + s.Name)})
	if err != nil {
		t.Fatal(err)
	}
	s.stopWork = testenv.RunUntilCleanup(t, w.Run)
}

func TestFencing(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 2, CRDs: true})
	env.DeleteWebhookConfigurationAtEnd(t)
	env.StartHub(t, testenv.TestHubOptions())
	hub := env.HubClient(t)
	ctx := context.Background()

	t.Run("bad policies are refused with the rule", func(t *testing.T) {
		for name, tc := range map[string]struct {
			spec failoverv1alpha1.FailoverPolicySpec
			want string
		}{
			"L below F + lease + skew": {spec: failoverv1alpha1.FailoverPolicySpec{ClusterSet: "global", LeaseDurationSeconds: 5, FenceAfterSeconds: 20, LostAfterSeconds: 29},
				want: "spec.lostAfterSeconds must be at least spec.fenceAfterSeconds + spec.leaseDurationSeconds + 5"},
			"negative F": {spec: failoverv1alpha1.FailoverPolicySpec{ClusterSet: "global", FenceAfterSeconds: -1},
				want: "spec.fenceAfterSeconds: Invalid value: -1: spec.fenceAfterSeconds in body should be greater than or equal to 1"},
			"no set": {spec: failoverv1alpha1.FailoverPolicySpec{FenceAfterSeconds: 20},
				want: "spec.clusterSet"},
		} {
			p := &failoverv1alpha1.FailoverPolicy{ObjectMeta: metav1.ObjectMeta{Name: "bad-" + strings.ReplaceAll(strings.ToLower(name), " ", "-")}, Spec: tc.spec}
			p.Name = strings.NewReplacer("+", "", "--", "-").Replace(p.Name)
			err := hub.Create(ctx, p)
			if err == nil {
				_ = hub.Delete(ctx, p)
				t.Errorf("%s: the API server took %+v", name, tc.spec)
				continue
			}
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: error = %v, want Invalid containing %q", name, err, tc.want)
			}
		}
	})

	testenv.Create(t, hub, &failoverv1alpha1.FailoverPolicy{ObjectMeta: metav1.ObjectMeta{Name: "chaos"},
		Spec: failoverv1alpha1.FailoverPolicySpec{ClusterSet: clusterset.GlobalSetName, LeaseDurationSeconds: fenceLease, FenceAfterSeconds: fenceAfter, LostAfterSeconds: lostAfter}})
	var spokes []*fenced
	// The agents ask for the policy's lease when they register, so that they read their
	// ManagedCluster, and the timing on it, at that period from the start.
	for _, j := range env.JoinSpokesLinked(t, func(o *registration.Options) { o.LeaseDurationSeconds = fenceLease }) {
		spokes = append(spokes, startAgents(t, j))
	}
	want := fencing.Timing{Lease: fenceLease * time.Second, FenceAfter: fenceAfter * time.Second, LostAfter: lostAfter * time.Second}
	for _, s := range spokes {
		waitTiming(t, hub, s.Name, want)
	}
	p := &failoverv1alpha1.FailoverPolicy{}
	if err := hub.Get(ctx, client.ObjectKey{Name: "chaos"}, p); err != nil {
		t.Fatal(err)
	}
	if p.Status.Clusters != int32(len(spokes)) {
		t.Errorf("FailoverPolicy status.clusters = %d, want %d", p.Status.Clusters, len(spokes))
	}

	t.Run("an agent cannot change its own timing or epoch", func(t *testing.T) {
		s := spokes[0]
		agent := s.Agent.Hub().Current().Client
		mc := &clusterv1.ManagedCluster{}
		if err := agent.Get(ctx, client.ObjectKey{Name: s.Name}, mc); err != nil {
			t.Fatal(err)
		}
		longer := fencing.Timing{Lease: time.Hour, FenceAfter: time.Hour, LostAfter: 3 * time.Hour}.String()
		edited := mc.DeepCopy()
		edited.Annotations[fencing.AnnotationTiming] = longer
		edited.Annotations[fencing.AnnotationEpoch] = "0"
		if err := agent.Patch(ctx, edited, client.MergeFrom(mc)); !apierrors.IsForbidden(err) {
			t.Errorf("the agent patched its ManagedCluster's annotations: %v, want Forbidden", err)
		}
		// Through the status subresource, which it may write, the API server drops the rest.
		if err := agent.Status().Patch(ctx, edited, client.MergeFrom(mc)); err != nil {
			t.Fatalf("the agent's own status write: %v", err)
		}
		got := &clusterv1.ManagedCluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: s.Name}, got); err != nil {
			t.Fatal(err)
		}
		if got.Annotations[fencing.AnnotationTiming] == longer {
			t.Errorf("the agent's status write changed the timing annotation to %q", longer)
		}
	})

	for _, s := range spokes {
		env.AddNodes(t, s.Spoke, localk8s.NodePool{Name: "gpu", Count: 1, GPUModel: h100, GPUs: 8,
			CPU: resource.MustParse("32"), Memory: resource.MustParse("256Gi")})
	}
	one := spokes[0]

	t.Run("a partition shorter than F changes nothing", func(t *testing.T) {
		w := fencedWork(one.Name, "short")
		testenv.Create(t, hub, w)
		waitRunning(t, one, "short")
		episodes := one.fence.Episodes()
		// Cut right after a renewal, so that the partition, not the renewal period, is what
		// stays below F: TCP sends what the cut dropped again within a second or two of the heal.
		waitRenewed(t, hub, one.Name, time.Now(), 10*time.Second)
		one.Link.Cut(t)
		time.Sleep(2 * time.Second)
		one.Link.Heal(t)
		waitRenewed(t, hub, one.Name, time.Now(), 60*time.Second)
		if one.fence.Episodes() != episodes || one.fence.Fenced() {
			t.Errorf("the fence was raised by a %ds partition (F = %ds)", 2, fenceAfter)
		}
		j := job(t, one, "short")
		if ptr.Deref(j.Spec.Suspend, false) || j.Annotations[fencing.AnnotationStopped] != "" {
			t.Errorf("job short was stopped by a partition shorter than F: suspend %v, %s", ptr.Deref(j.Spec.Suspend, false), j.Annotations[fencing.AnnotationStopped])
		}
		if e := epoch(t, hub, one.Name); e != 0 {
			t.Errorf("epoch %d after a short partition, want 0", e)
		}
	})

	t.Run("a partition between F and L stops the fenced work and resumes it in place", func(t *testing.T) {
		w := fencedWork(one.Name, "mid")
		testenv.Create(t, hub, w)
		waitRunning(t, one, "mid")
		plain := plainWork(one.Name, "serve")
		testenv.Create(t, hub, plain)
		waitRunning(t, one, "serve")
		episodes := one.fence.Episodes()
		waitRenewed(t, hub, one.Name, time.Now(), 10*time.Second)
		cut := time.Now()
		one.Link.Cut(t)
		testenv.WaitFor(t, (fenceAfter+5)*time.Second, "job mid to be suspended by the fence", func(ctx context.Context) (bool, string, error) {
			j := job(t, one, "mid")
			return ptr.Deref(j.Spec.Suspend, false), j.Annotations[fencing.AnnotationStopped], nil
		})
		fencedAfter := time.Since(cut)
		waitNoPods(t, one, "mid")
		if j := job(t, one, "serve"); ptr.Deref(j.Spec.Suspend, false) {
			t.Error("job serve, of a work that is not fenced, was suspended")
		}
		one.Link.Heal(t)
		testenv.WaitFor(t, 90*time.Second, "the fence to be lowered", func(context.Context) (bool, string, error) {
			return one.fence.Episodes() > episodes, fmt.Sprintf("fenced %v", one.fence.Fenced()), nil
		})
		waitRunning(t, one, "mid")
		if e := epoch(t, hub, one.Name); e != 0 {
			t.Errorf("epoch %d: the hub declared the cluster lost during a partition shorter than L", e)
		}
		c := condition(t, hub, one.Name, fencing.ConditionWorkloadsFenced)
		if c == nil || c.Reason != "Healed" || !strings.Contains(c.Message, "resumed") {
			t.Errorf("WorkloadsFenced = %+v, want Healed", c)
		}
		t.Logf("fenced %s after the cut (F = %ds); %s", fencedAfter.Round(time.Millisecond), fenceAfter, c.Message)
	})

	t.Run("the agent killed past F and restarted before L, as its pod would be: nothing stops, nothing is declared lost", func(t *testing.T) {
		testenv.Create(t, hub, fencedWork(one.Name, "agentkill"))
		waitRunning(t, one, "agentkill")
		changes := watchStale(t, one, "agentkill")
		notAvailable := watchAvailable(t, hub, one.Name)
		waitRenewed(t, hub, one.Name, time.Now(), 10*time.Second)
		one.killAgent()
		// Past F without an agent: no fence runs, and the hub has not declared anything (L).
		time.Sleep((fenceAfter + 4) * time.Second)
		one.restartAgent()
		restarted := time.Now()
		waitRenewed(t, hub, one.Name, restarted, 30*time.Second)
		// The new agent's fence counts F from its own start until its first renewal: give it
		// that long and more, in which it must stop nothing.
		time.Sleep((fenceAfter + 2) * time.Second)
		j := job(t, one, "agentkill")
		if ptr.Deref(j.Spec.Suspend, false) || j.Annotations[fencing.AnnotationStopped] != "" {
			t.Errorf("job agentkill was stopped around the agent's restart: suspend %v, %s", ptr.Deref(j.Spec.Suspend, false), j.Annotations[fencing.AnnotationStopped])
		}
		if resumed, created := changes(); resumed > 0 || created > 0 {
			t.Errorf("job agentkill was stopped and started again around the agent's restart: resumed %d times, %d pods created", resumed, created)
		}
		if e := epoch(t, hub, one.Name); e != 0 {
			t.Errorf("epoch %d: the hub declared the cluster lost while its agent was down for less than L", e)
		}
		if seen := notAvailable(); len(seen) > 0 {
			t.Errorf("the hub said %s was not available while its agent was down for less than L (fenced timing): %v", one.Name, seen)
		}
		if one.fence.Episodes() != 0 || one.fence.Fenced() {
			t.Errorf("the restarted agent's fence was raised")
		}
	})

	t.Run("a partition beyond L: declared lost, moved by its placement, the stale copy removed, never two at once", func(t *testing.T) {
		ns := env.Namespace(t, env.Hub)
		testenv.Create(t, hub, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: clusterset.GlobalSetName, Namespace: ns},
			Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: clusterset.GlobalSetName}})
		testenv.Create(t, hub, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "one", Namespace: ns},
			Spec: clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](1)}})
		set := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "moves", Namespace: ns,
			Annotations: map[string]string{fencing.AnnotationWorkFenced: "true"}},
			Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
				ManifestWorkTemplate:  workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{trainJob("moves")}}},
				PlacementRefs:         []workv1alpha1.LocalPlacementReference{{Name: "one"}},
				CascadeDeletionPolicy: workv1alpha1.Background,
			}}
		testenv.Create(t, hub, set)
		var from, to *fenced
		testenv.WaitFor(t, 60*time.Second, "job moves to run on one cluster", func(ctx context.Context) (bool, string, error) {
			for i, s := range spokes {
				if running(t, s, "moves") {
					from, to = s, spokes[1-i]
					return true, "", nil
				}
			}
			return false, "", nil
		})
		// Every change to the stale copy from the cut on, as the spoke's API server records it: a
		// resumed Job or a new pod lasts only until the work agent removes the copy, too short to
		// be sure to catch by polling.
		stale := watchStale(t, from, "moves")
		episodes := from.fence.Episodes()
		cut := time.Now()
		from.Link.Cut(t)
		// The work agent, which removes the copy once it learns that the work left the cluster,
		// is stopped until the fence has been lowered: the fence alone must keep the copy from
		// running again, whichever of the two acts first when the link returns.
		from.stopWork()
		// Watch the lost cluster's pods until they are gone: the last time one was seen.
		lastSeen := waitNoPods(t, from, "moves")
		testenv.WaitFor(t, (lostAfter+10)*time.Second, from.Name+" to be declared lost", func(ctx context.Context) (bool, string, error) {
			return epoch(t, hub, from.Name) == 1, "", nil
		})
		lost := time.Since(cut)
		var started time.Time
		testenv.WaitFor(t, 60*time.Second, "job moves to run on "+to.Name, func(ctx context.Context) (bool, string, error) {
			pods := pods(t, to, "moves")
			for _, p := range pods {
				if p.Status.StartTime != nil {
					started = p.Status.StartTime.Time
					return true, "", nil
				}
			}
			return false, fmt.Sprintf("%d pods", len(pods)), nil
		})
		elsewhere := time.Since(cut)
		// Zero overlap, from the pods' own records: the new pod started (kube's second precision)
		// after the last moment a pod of the stale copy was seen.
		if !started.After(lastSeen.Truncate(time.Second)) {
			t.Errorf("overlap: job moves started on %s at %s, but a pod of it was still on %s at %s", to.Name, started, from.Name, lastSeen)
		}
		from.Link.Heal(t)
		testenv.WaitFor(t, 120*time.Second, from.Name+"'s fence to be lowered", func(context.Context) (bool, string, error) {
			return from.fence.Episodes() > episodes, fmt.Sprintf("fenced %v", from.fence.Fenced()), nil
		})
		if j := job(t, from, "moves"); !ptr.Deref(j.Spec.Suspend, false) {
			t.Errorf("the fence resumed the stale copy of job moves on %s after the hub declared the cluster lost", from.Name)
		}
		from.startWork()
		// The stale copy never runs again: it stays suspended until the work agent removes it.
		testenv.WaitFor(t, 120*time.Second, "the stale copy on "+from.Name+" to be removed", func(ctx context.Context) (bool, string, error) {
			j, err := from.Spoke.Client.BatchV1().Jobs("default").Get(ctx, "moves", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, "", nil
			}
			if err != nil {
				return false, "", err
			}
			if !ptr.Deref(j.Spec.Suspend, false) {
				t.Errorf("the stale copy of job moves on %s was resumed after the hub declared the cluster lost", from.Name)
				return true, "", nil
			}
			if n := len(pods(t, from, "moves")); n > 0 {
				t.Errorf("the stale copy of job moves on %s has %d pods again", from.Name, n)
				return true, "", nil
			}
			return false, "suspended", nil
		})
		removed := time.Since(cut)
		if resumed, created := stale(); resumed > 0 || created > 0 {
			t.Errorf("the stale copy of job moves on %s ran again after the cut: resumed %d times, %d pods created", from.Name, resumed, created)
		}
		waitAvailable(t, hub, from.Name, metav1.ConditionTrue, 60*time.Second)
		testenv.WaitFor(t, 60*time.Second, from.Name+"'s fence to report the raised epoch", func(context.Context) (bool, string, error) {
			c := condition(t, hub, from.Name, fencing.ConditionWorkloadsFenced)
			if c == nil {
				return false, "no WorkloadsFenced condition", nil
			}
			return strings.Contains(c.Message, "epoch 0 at the fence, 1 now"), c.Message, nil
		})
		t.Logf("partition of %s: pods gone %s after the cut; declared lost after %s (L = %ds); running on %s after %s; stale copy removed after %s",
			from.Name, lastSeen.Sub(cut).Round(time.Millisecond), lost.Round(time.Millisecond), lostAfter, to.Name, elsewhere.Round(time.Millisecond), removed.Round(time.Millisecond))
	})
	restarts(t, env, hub, one)
}

// restarts are the outages that are not partitions: the hub's API server restarted, a spoke's
// API server stopped for a while. Neither may declare a cluster lost or run a fenced job twice.
func restarts(t *testing.T, env *testenv.Env, hub client.Client, one *fenced) {
	t.Run("the hub's API server restarted: nothing is declared lost, the fenced job runs on", func(t *testing.T) {
		testenv.Create(t, hub, fencedWork(one.Name, "hub-restart"))
		waitRunning(t, one, "hub-restart")
		before := epoch(t, hub, one.Name)
		stale := watchStale(t, one, "hub-restart")
		down := time.Now()
		env.Hub.StopAPIServer()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := env.Hub.StartAPIServer(ctx); err != nil {
			t.Fatalf("starting the hub's API server again: %v", err)
		}
		t.Logf("the hub's API server was down %s (F = %ds)", time.Since(down).Round(time.Millisecond), fenceAfter)
		waitRenewed(t, hub, one.Name, time.Now(), 90*time.Second)
		testenv.WaitFor(t, 60*time.Second, "the fence to be down", func(context.Context) (bool, string, error) {
			return !one.fence.Fenced(), "", nil
		})
		waitRunning(t, one, "hub-restart")
		if after := epoch(t, hub, one.Name); after != before {
			t.Errorf("epoch %d -> %d: the hub declared %s lost over its own restart", before, after, one.Name)
		}
		// A restart longer than F stops the fenced job and resumes it in place: one run at a time.
		resumed, created := stale()
		t.Logf("over the restart the fenced job was resumed %d times, %d pods created", resumed, created)
	})

	t.Run("the hub's etcd restarted: nothing is declared lost or lost, the fenced job runs on", func(t *testing.T) {
		e := env.Hub.Etcd
		if e == nil || e == one.Spoke.Etcd {
			t.Fatal("the hub has no etcd of its own: TestMain must start the fleet with EtcdPerCluster")
		}
		testenv.Create(t, hub, fencedWork(one.Name, "etcd-restart"))
		waitRunning(t, one, "etcd-restart")
		before := epoch(t, hub, one.Name)
		worksBefore := workNames(t, hub, one.Name)
		stale := watchStale(t, one, "etcd-restart")
		down := time.Now()
		e.Stop()
		time.Sleep(3 * time.Second) // a restart of etcd's pod, not an instant one
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := e.Start(ctx); err != nil {
			t.Fatalf("starting the hub's etcd again: %v", err)
		}
		t.Logf("the hub's etcd was down %s (F = %ds)", time.Since(down).Round(time.Millisecond), fenceAfter)
		waitRenewed(t, hub, one.Name, time.Now(), 90*time.Second)
		testenv.WaitFor(t, 60*time.Second, "the fence to be down", func(context.Context) (bool, string, error) {
			return !one.fence.Fenced(), "", nil
		})
		waitRunning(t, one, "etcd-restart")
		if after := epoch(t, hub, one.Name); after != before {
			t.Errorf("epoch %d -> %d: the hub declared %s lost over its etcd's restart", before, after, one.Name)
		}
		if diff := cmp.Diff(worksBefore, workNames(t, hub, one.Name)); diff != "" {
			t.Errorf("ManifestWorks of %s across the hub's etcd restart (-before +after):\n%s", one.Name, diff)
		}
		resumed, created := stale()
		t.Logf("over the etcd restart the fenced job was resumed %d times, %d pods created", resumed, created)
	})

	t.Run("a spoke's API server stopped: the hub says it is unavailable, and moves nothing", func(t *testing.T) {
		testenv.Create(t, hub, fencedWork(one.Name, "spoke-down"))
		waitRunning(t, one, "spoke-down")
		before := epoch(t, hub, one.Name)
		one.Spoke.StopAPIServer()
		waitAvailable(t, hub, one.Name, metav1.ConditionFalse, 60*time.Second)
		time.Sleep(5 * time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := one.Spoke.StartAPIServer(ctx); err != nil {
			t.Fatalf("starting %s's API server again: %v", one.Name, err)
		}
		waitAvailable(t, hub, one.Name, metav1.ConditionTrue, 90*time.Second)
		waitRunning(t, one, "spoke-down")
		if after := epoch(t, hub, one.Name); after != before {
			t.Errorf("epoch %d -> %d: the hub declared %s lost while its agent renewed the lease", before, after, one.Name)
		}
		if one.fence.Fenced() {
			t.Errorf("the fence of %s was raised while its agent could renew its lease", one.Name)
		}
	})
}

// watchStale follows job name and its pods on s from now on, and returns a function that says
// how many times the Job was resumed (spec.suspend false after true) and how many pods were
// created since.
func watchStale(t *testing.T, s *fenced, name string) func() (resumed, created int) {
	t.Helper()
	w := watchSpoke(t, s)
	return func() (int, int) { return w.stale(name) }
}

// h100 is the GPU model of the spokes' simulated node.
const h100 = "NVIDIA-H100-80GB-HBM3"

// trainJob is a Job of one 8-GPU pod that runs for ten minutes on a simulated node.
func trainJob(name string) workv1.Manifest {
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: fmt.Appendf(nil, `{"apiVersion":"batch/v1","kind":"Job",
"metadata":{"name":%q,"namespace":"default"},
"spec":{"backoffLimit":0,"template":{"metadata":{"labels":{"job":%q},"annotations":{"pod-complete.stage.kwok.x-k8s.io/delay":"10m"}},
"spec":{"restartPolicy":"Never","nodeSelector":{"nvidia.com/gpu.product":%q},
"containers":[{"name":"train","image":"trainer","resources":{"requests":{"nvidia.com/gpu":"1","cpu":"1"},"limits":{"nvidia.com/gpu":"1"}}}]}}}}`, name, name, h100)}}
}

// fencedWork is a fenced ManifestWork of trainJob(name) for cluster.
func fencedWork(cluster, name string) *workv1.ManifestWork {
	w := plainWork(cluster, name)
	w.Annotations = map[string]string{fencing.AnnotationWorkFenced: "true"}
	return w
}

// plainWork is a ManifestWork of trainJob(name) for cluster that is not fenced.
func plainWork(cluster, name string) *workv1.ManifestWork {
	return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{trainJob(name)}}}}
}

func job(t *testing.T, s *fenced, name string) *batchv1.Job {
	t.Helper()
	j, err := s.Spoke.Client.BatchV1().Jobs("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("job %s on %s: %v", name, s.Name, err)
	}
	return j
}

// pods are the pods of job name on s (in any namespace), not being deleted.
func pods(t *testing.T, s *fenced, name string) []corev1.Pod {
	t.Helper()
	l, err := s.Spoke.Client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{LabelSelector: "job=" + name})
	if err != nil {
		t.Fatalf("pods of job %s on %s: %v", name, s.Name, err)
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// running says whether a pod of job name runs on s.
func running(t *testing.T, s *fenced, name string) bool {
	t.Helper()
	for _, p := range pods(t, s, name) {
		if p.Status.Phase == corev1.PodRunning {
			return true
		}
	}
	return false
}

func waitRunning(t *testing.T, s *fenced, name string) {
	t.Helper()
	testenv.WaitFor(t, 60*time.Second, "job "+name+" to run on "+s.Name, func(context.Context) (bool, string, error) {
		return running(t, s, name), "", nil
	})
}

// waitNoPods waits until job name has no pod on s, and returns the last time one was seen.
func waitNoPods(t *testing.T, s *fenced, name string) time.Time {
	t.Helper()
	var last time.Time
	testenv.WaitFor(t, (lostAfter)*time.Second, "the pods of job "+name+" on "+s.Name+" to stop", func(context.Context) (bool, string, error) {
		n := len(pods(t, s, name))
		if n > 0 {
			last = time.Now()
		}
		return n == 0, fmt.Sprintf("%d pods", n), nil
	})
	return last
}

// waitTiming waits until cluster runs under want: the hub's annotation, and the agent renewing at
// its period.
func waitTiming(t *testing.T, hub client.Client, cluster string, want fencing.Timing) {
	t.Helper()
	testenv.WaitFor(t, 2*clusterv1.DefaultLeaseDurationSeconds*time.Second, cluster+" to run under "+want.String(), func(ctx context.Context) (bool, string, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return false, "", err
		}
		l := &coordinationv1.Lease{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: cluster, Name: clusterv1.ManagedClusterLeaseName}, l); err != nil {
			return false, "", client.IgnoreNotFound(err)
		}
		d := ptr.Deref(l.Spec.LeaseDurationSeconds, 0)
		return mc.Annotations[fencing.AnnotationTiming] == want.String() && d == fenceLease,
			fmt.Sprintf("annotation %q, lease period %ds", mc.Annotations[fencing.AnnotationTiming], d), nil
	})
}

func epoch(t *testing.T, hub client.Client, cluster string) int64 {
	t.Helper()
	mc := &clusterv1.ManagedCluster{}
	if err := hub.Get(context.Background(), client.ObjectKey{Name: cluster}, mc); err != nil {
		t.Fatal(err)
	}
	return fencing.Epoch(mc.Annotations)
}

func condition(t *testing.T, hub client.Client, cluster, typ string) *metav1.Condition {
	t.Helper()
	mc := &clusterv1.ManagedCluster{}
	if err := hub.Get(context.Background(), client.ObjectKey{Name: cluster}, mc); err != nil {
		t.Fatal(err)
	}
	return meta.FindStatusCondition(mc.Status.Conditions, typ)
}

// startAgents runs the work agent and the fence of a joined spoke until the test ends.
func startAgents(t *testing.T, j *testenv.Joined) *fenced {
	t.Helper()
	s := &fenced{Joined: j, t: t}
	s.startFence()
	s.startWork()
	return s
}

// startFence runs a new fence on s with the registration agent's credentials, until stopFence or
// the end of the test that started s's agents.
func (s *fenced) startFence() {
	t := s.t
	t.Helper()
	f, err := fence.New(fence.Options{ClusterName: s.Name, Agent: s.Agent, Hub: s.Agent.Hub(), Spoke: s.Spoke.RESTConfig(),
		Log: testr.New(t).WithName("fence-" + s.Name)})
	if err != nil {
		t.Fatal(err)
	}
	runner := loop.Runner{Clock: clock.RealClock{}, Log: testr.New(t).WithName("fence-" + s.Name), InitialBackoff: 200 * time.Millisecond, MaxBackoff: time.Second}
	s.fence = f
	s.stopFence = testenv.RunUntilCleanup(t, func(ctx context.Context) error { return runner.Run(ctx, f.Loop()) })
}

// killAgent stops every agent of s at once (registration, fence, work), as the agent's pod
// killed would: nothing is said to the hub. restartAgent starts them again, with no memory.
func (s *fenced) killAgent() {
	s.stopFence()
	s.stopWork()
	s.StopAgent()
}

func (s *fenced) restartAgent() {
	s.StartAgent()
	s.startFence()
	s.startWork()
}

// timingOf is the fencing Timing the hub wrote for cluster, if any.
func timingOf(t *testing.T, hub client.Client, cluster string) (fencing.Timing, bool) {
	t.Helper()
	mc := &clusterv1.ManagedCluster{}
	if err := hub.Get(context.Background(), client.ObjectKey{Name: cluster}, mc); err != nil {
		t.Fatal(err)
	}
	tm, ok, _ := fencing.OfCluster(mc.Annotations)
	return tm, ok
}

// workNames lists the ManifestWorks in cluster's namespace on the hub that are not being deleted
// (an earlier subtest's, on their way out), sorted.
func workNames(t *testing.T, hub client.Client, cluster string) []string {
	t.Helper()
	l := &workv1.ManifestWorkList{}
	if err := hub.List(context.Background(), l, client.InNamespace(cluster)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, w := range l.Items {
		if w.DeletionTimestamp.IsZero() {
			out = append(out, w.Name)
		}
	}
	sort.Strings(out)
	return out
}
