//go:build integration

package builtinaddon

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/agent/addon"
	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/agent/builtin/resourceusage"
	"github.com/flotilla/flotilla/internal/apitest"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/gpufit"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{Spokes: 1, CRDs: true})) }

// scores reads the cluster's resource-usage-score as name=value pairs, "" when there is none.
func scores(ctx context.Context, c client.Client, cluster string) (map[string]int32, error) {
	s := &clusterv1alpha1.AddOnPlacementScore{}
	err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: clusterv1alpha1.ResourceUsageScoreName}, s)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]int32{}
	for _, v := range s.Status.Scores {
		out[v.Name] = v.Value
	}
	return out, nil
}

func waitScores(t *testing.T, c client.Client, cluster, what string, ok func(map[string]int32) bool) {
	t.Helper()
	testenv.WaitFor(t, 30*time.Second, what, func(ctx context.Context) (bool, string, error) {
		s, err := scores(ctx, c, cluster)
		return err == nil && ok(s), fmt.Sprintf("scores %v", s), err
	})
}

func waitAvailable(t *testing.T, c client.Client, cluster string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	t.Helper()
	var got *metav1.Condition
	testenv.WaitFor(t, 30*time.Second, "ManagedClusterAddOn resource-usage Available "+string(status), func(ctx context.Context) (bool, string, error) {
		a := &addonv1alpha1.ManagedClusterAddOn{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: resourceusage.Name}, a); err != nil {
			return false, "", err
		}
		got = meta.FindStatusCondition(a.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable)
		return got != nil && got.Status == status && got.Reason == reason && a.Status.HealthCheck.Mode == addonv1alpha1.HealthCheckModeCustomized,
			fmt.Sprintf("%+v, health check %q", got, a.Status.HealthCheck.Mode), nil
	})
	return got
}

func TestResourceUsage(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 1, CRDs: true})
	env.StartHub(t, testenv.TestHubOptions())
	one := env.JoinSpokes(t)[0]
	hub := env.HubClient(t)
	ctx := context.Background()
	env.AddNodes(t, one.Spoke, localk8s.NodePool{Name: "gpu", Count: 2, GPUModel: "NVIDIA-H100-80GB-HBM3", GPUs: 8,
		CPU: resource.MustParse("64"), Memory: resource.MustParse("512Gi")})
	ad, err := addon.New(addon.Options{
		ClusterName: one.Name, AgentID: "agent-" + one.Name, Hub: one.Agent.Hub(), Spoke: one.Spoke.RESTConfig(),
		BuiltIns: builtin.NewManager(one.Name, one.Spoke.RESTConfig(), clock.RealClock{}, testr.New(t).WithName("builtin"),
			resourceusage.AddOn{Interval: time.Second}),
		InitialBackoff: 200 * time.Millisecond, MaxBackoff: 2 * time.Second,
		Log: testr.New(t).WithName("addon"),
	})
	if err != nil {
		t.Fatal(err)
	}
	testenv.RunUntilCleanup(t, ad.Run)

	t.Run("the hub lists the built-in add-on, off everywhere", func(t *testing.T) {
		testenv.WaitFor(t, 30*time.Second, "ClusterManagementAddOn resource-usage", func(ctx context.Context) (bool, string, error) {
			cma := &addonv1alpha1.ClusterManagementAddOn{}
			if err := hub.Get(ctx, client.ObjectKey{Name: resourceusage.Name}, cma); err != nil {
				return false, "", client.IgnoreNotFound(err)
			}
			return cma.Labels[builtinaddon.Label] == resourceusage.Name && cma.Spec.InstallStrategy.Type == addonv1alpha1.InstallStrategyManual,
				fmt.Sprintf("labels %v, install strategy %q", cma.Labels, cma.Spec.InstallStrategy.Type), nil
		})
		time.Sleep(3 * time.Second) // three intervals of an add-on that would run
		if s, err := scores(ctx, hub, one.Name); err != nil || s != nil {
			t.Errorf("before the add-on is enabled: scores %v (%v), want none", s, err)
		}
	})

	t.Run("enabled: figures and scores of the simulated GPUs follow a real Job", func(t *testing.T) {
		// Created, not testenv.Create: it lives on into the next subtests.
		if err := hub.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: resourceusage.Name}}); err != nil {
			t.Fatal(err)
		}
		// 2 nodes x 8 H100, all free: the fleet is this one cluster, so both scores are its maximum.
		waitGPUs(t, hub, one.Name, "16 free H100, 2 nodes with 8", "16", map[string]int32{"8": 2})
		waitScores(t, hub, one.Name, "GPU scores of 16 free GPUs", func(s map[string]int32) bool {
			return s[clusterv1alpha1.ScoreGPUNodeAvailable] == 100 && s[clusterv1alpha1.ScoreGPUClusterAvailable] == 100
		})
		waitAvailable(t, hub, one.Name, metav1.ConditionTrue, builtin.ReasonRunning)

		// A placement that needs 2 nodes with 8 free H100s each (gang fit), over every cluster.
		ns := env.Namespace(t, env.Hub)
		testenv.Create(t, hub, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "global"},
			Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "global"}})
		p := &clusterv1beta1.Placement{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "h100", Annotations: map[string]string{
				gpufit.Annotation: "model=NVIDIA-H100-80GB-HBM3,perNode=8,nodes=2"}},
			Spec: clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](1), ClusterSets: []string{"global"}},
		}
		testenv.Create(t, hub, p)
		waitDecisions(t, hub, p, "the placement picks the cluster", one.Name)

		// A Job the spoke's scheduler places and kwok's simulated kubelet runs, then completes.
		job := gpuJob("train", 8, 15*time.Second)
		if _, err := one.Spoke.Client.BatchV1().Jobs("default").Create(ctx, job, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			bg := metav1.DeletePropagationBackground
			_ = one.Spoke.Client.BatchV1().Jobs("default").Delete(context.Background(), "train", metav1.DeleteOptions{PropagationPolicy: &bg})
		})
		waitGPUs(t, hub, one.Name, "8 free H100 while the Job runs", "8", map[string]int32{"8": 1})
		waitDecisions(t, hub, p, "the placement lets the cluster go: one node with 8 free, not 2")
		// Half the cluster's GPUs free: 0 against the fleet's largest cluster (itself); its best
		// node is still whole: 100.
		waitScores(t, hub, one.Name, "GPU scores of the 8 GPUs left", func(s map[string]int32) bool {
			return s[clusterv1alpha1.ScoreGPUNodeAvailable] == 100 && s[clusterv1alpha1.ScoreGPUClusterAvailable] == 0
		})
		waitGPUs(t, hub, one.Name, "16 free H100 once the Job completed", "16", map[string]int32{"8": 2})
		waitDecisions(t, hub, p, "the placement picks the cluster again", one.Name)
		waitScores(t, hub, one.Name, "GPU scores of 16 free GPUs again", func(s map[string]int32) bool {
			return s[clusterv1alpha1.ScoreGPUClusterAvailable] == 100
		})
	})

	t.Run("the agent's identity writes scores in its own namespace only", func(t *testing.T) {
		other := env.Namespace(t, env.Hub)
		s := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: clusterv1alpha1.ResourceUsageScoreName}}
		err := one.Agent.Hub().Current().Client.Create(ctx, s)
		if !apierrors.IsForbidden(err) {
			t.Errorf("the agent creating an AddOnPlacementScore in namespace %s: %v, want Forbidden", other, err)
		}
		u := &usagev1alpha1.ResourceUsage{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: usagev1alpha1.ResourceUsageName}}
		err = one.Agent.Hub().Current().Client.Create(ctx, u)
		if !apierrors.IsForbidden(err) {
			t.Errorf("the agent creating a ResourceUsage in namespace %s: %v, want Forbidden", other, err)
		}
	})

	t.Run("disabled: the add-on stops; its figures and the hub's score are deleted", func(t *testing.T) {
		mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: resourceusage.Name}}
		if err := hub.Delete(ctx, mca); err != nil {
			t.Fatal(err)
		}
		waitGPUs(t, hub, one.Name, "the ResourceUsage deleted", "", nil)
		waitScores(t, hub, one.Name, "the score deleted", func(s map[string]int32) bool { return s == nil })
	})

	t.Run("figures someone else wrote are left alone, and the add-on says why it cannot run", func(t *testing.T) {
		theirs := &usagev1alpha1.ResourceUsage{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: usagev1alpha1.ResourceUsageName}}
		testenv.Create(t, hub, theirs)
		testenv.Create(t, hub, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: resourceusage.Name}})
		c := waitAvailable(t, hub, one.Name, metav1.ConditionFalse, builtin.ReasonFailed)
		want := "ResourceUsage " + one.Name + "/resource-usage exists and was not written by the built-in add-on resource-usage"
		if !strings.Contains(c.Message, want) {
			t.Errorf("Available message %q does not say %q", c.Message, want)
		}
		mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: resourceusage.Name}}
		if err := hub.Delete(ctx, mca); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		if err := hub.Get(ctx, client.ObjectKeyFromObject(theirs), theirs); err != nil {
			t.Errorf("after disabling, their ResourceUsage: %v, want it kept", err)
		}
		// The hub scores whatever figures the cluster's namespace holds; gone, the score goes.
		if err := hub.Delete(ctx, theirs); err != nil {
			t.Fatal(err)
		}
		waitScores(t, hub, one.Name, "the score of their figures deleted with them", func(s map[string]int32) bool { return s == nil })
	})

	t.Run("a score someone else wrote is left alone by the hub", func(t *testing.T) {
		theirs := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: clusterv1alpha1.ResourceUsageScoreName}}
		testenv.Create(t, hub, theirs)
		theirs.Status.Scores = []clusterv1alpha1.AddOnPlacementScoreItem{{Name: clusterv1alpha1.ScoreGPUClusterAvailable, Value: 7}}
		if err := hub.Status().Update(ctx, theirs); err != nil {
			t.Fatal(err)
		}
		testenv.Create(t, hub, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: resourceusage.Name}})
		waitGPUs(t, hub, one.Name, "16 free H100", "16", map[string]int32{"8": 2})
		time.Sleep(2 * time.Second) // time for the hub to write the score, if it would
		if s, err := scores(ctx, hub, one.Name); err != nil || s[clusterv1alpha1.ScoreGPUClusterAvailable] != 7 || len(s) != 1 {
			t.Errorf("their score: %v (%v), want it as they wrote it", s, err)
		}
		mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: resourceusage.Name}}
		if err := hub.Delete(ctx, mca); err != nil {
			t.Fatal(err)
		}
		waitGPUs(t, hub, one.Name, "the ResourceUsage deleted", "", nil)
		if s, err := scores(ctx, hub, one.Name); err != nil || s == nil {
			t.Errorf("after disabling, their score: %v (%v), want it kept", s, err)
		}
		if err := hub.Delete(ctx, theirs); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("another writer on the hub's score, then OCM's resource-usage-collect: the hub stops and says so", func(t *testing.T) {
		mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: resourceusage.Name}}
		testenv.Create(t, hub, mca)
		waitScores(t, hub, one.Name, "the hub's score", func(s map[string]int32) bool { return len(s) == 8 })
		// OCM's agent updates the status of the score it finds, with a field manager of its own
		// (this test's client's).
		score := &clusterv1alpha1.AddOnPlacementScore{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: one.Name, Name: clusterv1alpha1.ResourceUsageScoreName}, score); err != nil {
			t.Fatal(err)
		}
		score.Status.Scores = []clusterv1alpha1.AddOnPlacementScoreItem{{Name: "cpuAvailable", Value: 42}}
		if err := hub.Status().Update(ctx, score, client.FieldOwner("resource-usage-collect-agent")); err != nil {
			t.Fatal(err)
		}
		waitConflict(t, hub, one.Name, "True/ScoreWrittenByOther", "resource-usage-collect-agent")
		// The agent keeps writing its figures, each a reconcile of the score: the hub still does not write.
		if s, err := scores(ctx, hub, one.Name); err != nil || len(s) != 1 || s["cpuAvailable"] != 42 {
			t.Errorf("the other writer's score: %v (%v), want cpuAvailable=42 alone", s, err)
		}
		ocm := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: builtinaddon.ResourceUsageCollect}}
		testenv.Create(t, hub, ocm)
		waitConflict(t, hub, one.Name, "True/ResourceUsageCollectEnabled", "resource-usage-collect")
		for _, o := range []client.Object{ocm, mca} {
			if err := hub.Delete(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		if s, err := scores(ctx, hub, one.Name); err != nil || len(s) != 1 || s["cpuAvailable"] != 42 {
			t.Errorf("after disabling, the other writer's score: %v (%v), want it kept", s, err)
		}
	})
}

// waitConflict waits until the cluster's resource-usage add-on has ScoreConflict Status/Reason
// want, with a message that contains mention.
func waitConflict(t *testing.T, c client.Client, cluster, want, mention string) {
	t.Helper()
	testenv.WaitFor(t, 30*time.Second, "ManagedClusterAddOn resource-usage ScoreConflict "+want, func(ctx context.Context) (bool, string, error) {
		m := &addonv1alpha1.ManagedClusterAddOn{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: resourceusage.Name}, m); err != nil {
			return false, "", client.IgnoreNotFound(err)
		}
		cond := meta.FindStatusCondition(m.Status.Conditions, builtinaddon.ScoreConflictCondition)
		if cond == nil {
			return false, "no condition", nil
		}
		got := string(cond.Status) + "/" + cond.Reason
		return got == want && strings.Contains(cond.Message, mention), got + ": " + cond.Message, nil
	})
}

// waitDecisions waits for the placement's decisions to name exactly the clusters.
func waitDecisions(t *testing.T, c client.Client, p *clusterv1beta1.Placement, what string, clusters ...string) {
	t.Helper()
	testenv.WaitFor(t, 30*time.Second, what, func(ctx context.Context) (bool, string, error) {
		l := &clusterv1beta1.PlacementDecisionList{}
		if err := c.List(ctx, l, client.InNamespace(p.Namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: p.Name}); err != nil {
			return false, "", err
		}
		var got []string
		for _, d := range l.Items {
			for _, dd := range d.Status.Decisions {
				got = append(got, dd.ClusterName)
			}
		}
		return slices.Equal(got, clusters), fmt.Sprintf("decisions %v", got), nil
	})
}

// gpuJob is a Job of one pod asking gpus GPUs, which kwok completes after runFor.
func gpuJob(name string, gpus int64, runFor time.Duration) *batchv1.Job {
	return apitest.MakeJob("default", name).GPUs(gpus).RunFor(runFor).Obj()
}

// waitGPUs waits for the cluster's ResourceUsage to give free H100s and their spread over the
// nodes (amount -> nodes with at least that much); free "" waits for no ResourceUsage.
func waitGPUs(t *testing.T, c client.Client, cluster, what, free string, freeNodes map[string]int32) {
	t.Helper()
	testenv.WaitFor(t, 30*time.Second, what, func(ctx context.Context) (bool, string, error) {
		u := &usagev1alpha1.ResourceUsage{}
		err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: usagev1alpha1.ResourceUsageName}, u)
		if apierrors.IsNotFound(err) {
			return free == "", "no ResourceUsage", nil
		}
		if err != nil {
			return false, "", err
		}
		f := u.Status.Figures(usagev1alpha1.ResourceNvidiaGPU, "NVIDIA-H100-80GB-HBM3")
		if f == nil {
			return false, fmt.Sprintf("no H100 figures in %+v", u.Status), nil
		}
		got := map[string]int32{}
		for _, e := range f.FreeNodes {
			got[e.Free.String()] = e.Nodes
		}
		if len(got) == 0 {
			got = nil
		}
		state := fmt.Sprintf("free %s, free nodes %v, valid until %v", f.Free.String(), got, u.Status.ValidUntil)
		return f.Free.String() == free && cmp.Equal(freeNodes, got) && u.Status.Valid(time.Now()), state, nil
	})
}
