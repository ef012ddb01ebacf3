//go:build integration

package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/api/scheme"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla/flotilla/api/work/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub"
	"github.com/flotilla/flotilla/internal/hub/workreplicaset"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const (
	leaderClusters   = 40
	leaderPlacements = 30
	leaderNamespace  = "flotilla-leader-test"
)

// TestHubLeaderKilled runs two replicas of `flotilla hub` with leader election and kills the
// leader with SIGKILL while placements are being decided and a ManifestWorkReplicaSet rolls out
// progressively. The other replica takes over within the leader lease; every placement ends with
// the decisions a placement made afterwards, alone, gets; every cluster has exactly one of the
// set's ManifestWorks; the rollout completes; the joined clusters are never declared lost.
func TestHubLeaderKilled(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 2, CRDs: true})
	hubc := env.HubClient(t)
	bin := buildFlotilla(t)

	// The replicas serve the admission webhook; its configuration names the last leader's address
	// and must not outlive the test.
	env.DeleteWebhookConfigurationAtEnd(t)
	a := startHubProcess(t, bin, env.Hub.Kubeconfig, "a")
	leaderA := waitLeader(t, hubc, "")
	// Linked, as the package's other tests join: a join takes the request the agent files now.
	joined := env.JoinSpokesLinked(t, nil)
	startHubProcess(t, bin, env.Hub.Kubeconfig, "b")

	// Clusters without agents: accepted, in a set bound into the test's namespace.
	set := env.NewBoundSet(t, hubc, "leader")
	zones := []string{"a", "b", "c", "d"}
	var clusters []string
	for i := range leaderClusters {
		name := fmt.Sprintf("leader-%02d", i)
		set.AcceptedCluster(t, name, map[string]string{"zone": zones[i%len(zones)]})
		clusters = append(clusters, name)
	}
	// The joined clusters must stay available throughout, once their agents have said so.
	for _, j := range joined {
		waitAvailable(t, hubc, j.Name, metav1.ConditionTrue, 2*time.Minute)
	}
	lost := watchAvailable(t, hubc, joined[0].Name, joined[1].Name)

	// A progressive rollout over every cluster of the set, three at a time; the test reports each
	// ManifestWork succeeded, as an agent would, so that the rollout moves on.
	testenv.Create(t, hubc, placement(set.Namespace, "all", nil, 0))
	mwrs := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rollout", Namespace: set.Namespace},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{configMapManifest("app")}}},
			PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: "all", RolloutStrategy: clusterv1alpha1.RolloutStrategy{
				Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(3)}}}},
			CascadeDeletionPolicy: workv1alpha1.Background,
		}}
	testenv.Create(t, hubc, mwrs)
	stopAgents := fakeAgents(t, env, clusters, "rollout")
	defer stopAgents()

	// Placements, created while the leader works.
	var names []string
	for i := range leaderPlacements {
		name := fmt.Sprintf("p-%02d", i)
		testenv.Create(t, hubc, placement(set.Namespace, name, []string{zones[i%4], zones[(i+1)%4]}, int32(1+i%7)))
		names = append(names, name)
	}
	testenv.WaitFor(t, 60*time.Second, "the rollout to be under way", func(ctx context.Context) (bool, string, error) {
		n := len(setWorks(t, hubc, mwrs))
		return n >= 9, fmt.Sprintf("%d works", n), nil
	})
	killed := time.Now()
	if err := a.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	worksAtKill := len(setWorks(t, hubc, mwrs))
	leaderB := waitLeader(t, hubc, leaderA)
	tookOver := time.Since(killed)
	// The new leader's first write of the rollout: a ManifestWork the dead leader had not made.
	testenv.WaitFor(t, time.Minute, "the new leader to make a ManifestWork", func(context.Context) (bool, string, error) {
		n := len(setWorks(t, hubc, mwrs))
		return n > worksAtKill, fmt.Sprintf("%d works", n), nil
	})
	firstWrite := time.Since(killed)

	testenv.WaitFor(t, 3*time.Minute, "the rollout to complete", func(ctx context.Context) (bool, string, error) {
		got := &workv1alpha1.ManifestWorkReplicaSet{}
		if err := hubc.Get(ctx, client.ObjectKeyFromObject(mwrs), got); err != nil {
			return false, "", err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut)
		return c != nil && c.Status == metav1.ConditionTrue && len(setWorks(t, hubc, mwrs)) == leaderClusters,
			fmt.Sprintf("%d works, rolled out %+v", len(setWorks(t, hubc, mwrs)), c), nil
	})
	// Exactly one ManifestWork of the set per cluster.
	perCluster := map[string]int{}
	for _, w := range setWorks(t, hubc, mwrs) {
		perCluster[w.Namespace]++
	}
	for _, c := range clusters {
		if perCluster[c] != 1 {
			t.Errorf("cluster %s has %d ManifestWorks of the set, want 1", c, perCluster[c])
		}
	}
	// Every placement decided as a placement made now, alone, decides.
	for _, name := range names {
		testenv.Create(t, hubc, withName(placementOf(t, hubc, set.Namespace, name), "ref-"+name))
	}
	for _, name := range names {
		got, want := waitDecided(t, hubc, set.Namespace, name), waitDecided(t, hubc, set.Namespace, "ref-"+name)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("placement %s decided %v across the leader's death; a placement made afterwards decides %v", name, got, want)
		}
	}
	if l := lost(); len(l) > 0 {
		t.Errorf("clusters declared lost while the hub changed leaders: %v", l)
	}
	t.Logf("leader %s killed with %d of %d ManifestWorks made; %s took over %s later (leader lease %s, retry period 2s) and made its first ManifestWork %s after the kill; "+
		"the rollout completed with one ManifestWork per cluster, and %d placements decided as they would have",
		leaderA, worksAtKill, leaderClusters, leaderB, tookOver.Round(time.Millisecond), hubLeaseDuration, firstWrite.Round(time.Millisecond), len(names))
}

// hubLeaseDuration is controller-runtime's default leader lease, which `flotilla hub` uses.
const hubLeaseDuration = 15 * time.Second

func buildFlotilla(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "flotilla")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/flotilla")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building flotilla: %v\n%s", err, out)
	}
	return bin
}

// startHubProcess runs `flotilla hub` with leader election until the test ends; its log is
// hub-<name>.log in the test's temporary folder.
func startHubProcess(t *testing.T, bin, kubeconfig, name string) *exec.Cmd {
	t.Helper()
	log, err := os.Create(filepath.Join(t.TempDir(), "hub-"+name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "hub", "--kubeconfig", kubeconfig, "--leader-elect", "--leader-election-namespace", leaderNamespace,
		"--health-probe-bind-address", "0", "--metrics-bind-address", "0", "--explain-bind-address", "127.0.0.1:0", "--v=2")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_, _ = cmd.Process.Wait()
		_ = log.Close()
		if t.Failed() {
			if b, err := os.ReadFile(log.Name()); err == nil {
				t.Logf("hub %s's log (last 3000 bytes):\n%s", name, tail(b, 3000))
			}
		}
	})
	return cmd
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// waitLeader waits until the hub's leader Lease is held by someone other than not, and returns
// the holder.
func waitLeader(t *testing.T, hubc client.Client, not string) string {
	t.Helper()
	var holder string
	testenv.WaitFor(t, 2*time.Minute, "a hub leader other than "+not, func(ctx context.Context) (bool, string, error) {
		l := &coordinationv1.Lease{}
		if err := hubc.Get(ctx, client.ObjectKey{Namespace: leaderNamespace, Name: hub.LeaderElectionID}, l); err != nil {
			return false, "", client.IgnoreNotFound(err)
		}
		holder = ptr.Deref(l.Spec.HolderIdentity, "")
		return holder != "" && holder != not, "held by " + holder, nil
	})
	return holder
}

// placement selects the clusters in zones (all without), numberOfClusters n (all when 0), with
// no prioritizer, so that decisions depend only on the clusters: ties go by name. It tolerates the
// taints of clusters without agents.
func placement(ns, name string, zones []string, n int32) *clusterv1beta1.Placement {
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: clusterv1beta1.PlacementSpec{
		Tolerations:       testenv.NoAgentTolerations(),
		PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeExact},
	}}
	if n > 0 {
		p.Spec.NumberOfClusters = ptr.To(n)
	}
	if len(zones) > 0 {
		p.Spec.Predicates = []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "zone", Operator: metav1.LabelSelectorOpIn, Values: zones}}}}}}
	}
	return p
}

func placementOf(t *testing.T, hubc client.Client, ns, name string) *clusterv1beta1.Placement {
	t.Helper()
	p := &clusterv1beta1.Placement{}
	if err := hubc.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func withName(p *clusterv1beta1.Placement, name string) *clusterv1beta1.Placement {
	return &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: name}, Spec: *p.Spec.DeepCopy()}
}

// waitDecided waits until placement ns/name has exactly one PlacementDecision whose decisions
// number what its status says, and returns the decided clusters, sorted.
func waitDecided(t *testing.T, hubc client.Client, ns, name string) []string {
	t.Helper()
	var got []string
	testenv.WaitFor(t, 60*time.Second, "placement "+name+" to be decided", func(ctx context.Context) (bool, string, error) {
		p := &clusterv1beta1.Placement{}
		if err := hubc.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			return false, "", err
		}
		l := &clusterv1beta1.PlacementDecisionList{}
		if err := hubc.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: name}); err != nil {
			return false, "", err
		}
		if len(l.Items) != 1 {
			return false, fmt.Sprintf("%d PlacementDecisions", len(l.Items)), nil
		}
		got = got[:0]
		for _, d := range l.Items[0].Status.Decisions {
			got = append(got, d.ClusterName)
		}
		sort.Strings(got)
		return int(p.Status.NumberOfSelectedClusters) == len(got) && len(got) > 0,
			fmt.Sprintf("%d decided, status says %d", len(got), p.Status.NumberOfSelectedClusters), nil
	})
	return got
}

func setWorks(t *testing.T, hubc client.Client, s *workv1alpha1.ManifestWorkReplicaSet) []workv1.ManifestWork {
	t.Helper()
	l := &workv1.ManifestWorkList{}
	if err := hubc.List(context.Background(), l, client.MatchingLabels{workreplicaset.SetLabel: s.Namespace + "." + s.Name}); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func configMapManifest(name string) workv1.Manifest {
	m := workv1.Manifest{}
	m.Raw = fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"default"},"data":{"k":"v"}}`, name)
	return m
}

// fakeAgents reports every ManifestWork named name in clusters' namespaces Applied and
// Available, as their agents would, until stopped. It watches the works rather than polling them,
// so that its load on the hub's API server stays that of real agents.
func fakeAgents(t *testing.T, env *testenv.Env, clusters []string, name string) (stop func()) {
	t.Helper()
	wc, err := client.NewWithWatch(env.Hub.RESTConfig(), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ours := map[string]bool{}
	for _, c := range clusters {
		ours[c] = true
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			w, err := wc.Watch(ctx, &workv1.ManifestWorkList{})
			if err != nil {
				time.Sleep(time.Second) // the hub's API server may be restarting; watch again
				continue
			}
			for ev := range w.ResultChan() {
				mw, ok := ev.Object.(*workv1.ManifestWork)
				if !ok || mw.Name != name || !ours[mw.Namespace] || meta.IsStatusConditionTrue(mw.Status.Conditions, workv1.WorkAvailable) {
					continue
				}
				_ = retry.RetryOnConflict(retry.DefaultBackoff, func() error { return reportApplied(ctx, wc, client.ObjectKeyFromObject(mw)) })
			}
			w.Stop()
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// reportApplied writes the conditions an agent reports for a ManifestWork it applied.
func reportApplied(ctx context.Context, c client.Client, key client.ObjectKey) error {
	w := &workv1.ManifestWork{}
	if err := c.Get(ctx, key, w); err != nil {
		return client.IgnoreNotFound(err)
	}
	for typ, ok := range map[string]bool{workv1.WorkApplied: true, workv1.WorkAvailable: true, workv1.WorkProgressing: false, workv1.WorkDegraded: false} {
		st := metav1.ConditionFalse
		if ok {
			st = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: typ, Status: st, Reason: "Test", ObservedGeneration: w.Generation})
	}
	return c.Status().Update(ctx, w)
}

// watchAvailable records every time one of clusters is seen not Available=True, until the test
// ends; the returned function lists them.
func watchAvailable(t *testing.T, hubc client.Client, clusters ...string) func() []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var seen []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			for _, c := range clusters {
				mc := &clusterv1.ManagedCluster{}
				if err := hubc.Get(ctx, client.ObjectKey{Name: c}, mc); err != nil {
					continue
				}
				if cond := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); cond != nil && cond.Status != metav1.ConditionTrue {
					mu.Lock()
					seen = append(seen, fmt.Sprintf("%s %s (%s) at %s", c, cond.Status, cond.Reason, time.Now().Format(time.RFC3339)))
					mu.Unlock()
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}
