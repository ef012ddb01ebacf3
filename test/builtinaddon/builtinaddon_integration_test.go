//go:build integration

package builtinaddon

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/agent/addon"
	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/agent/builtin/resourceusage"
	"github.com/flotilla/flotilla/internal/builtinaddon"
	"github.com/flotilla/flotilla/internal/localk8s"
	"github.com/flotilla/flotilla/internal/testenv"
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

	t.Run("enabled: scores of the simulated GPUs, and they follow a GPU pod", func(t *testing.T) {
		// Created, not testenv.Create: it lives on into the next subtests.
		if err := hub.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: resourceusage.Name}}); err != nil {
			t.Fatal(err)
		}
		// 2 nodes x 8 GPUs free against OCM's maximum of 20: node 8 -> -20, cluster 16 -> 60.
		waitScores(t, hub, one.Name, "GPU scores of 16 free GPUs", func(s map[string]int32) bool {
			return s[clusterv1alpha1.ScoreGPUNodeAvailable] == -20 && s[clusterv1alpha1.ScoreGPUClusterAvailable] == 60
		})
		waitAvailable(t, hub, one.Name, metav1.ConditionTrue, builtin.ReasonRunning)
		nodes, err := one.Spoke.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil || len(nodes.Items) == 0 {
			t.Fatalf("nodes: %v", err)
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "train"},
			Spec: corev1.PodSpec{NodeName: nodes.Items[0].Name, Containers: []corev1.Container{{Name: "train", Image: "trainer",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")},
					Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}}}}},
		}
		if _, err := one.Spoke.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitScores(t, hub, one.Name, "GPU scores of the 8 GPUs left", func(s map[string]int32) bool {
			return s[clusterv1alpha1.ScoreGPUNodeAvailable] == -20 && s[clusterv1alpha1.ScoreGPUClusterAvailable] == -20
		})
		if err := one.Spoke.Client.CoreV1().Pods("default").Delete(ctx, "train", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
		waitScores(t, hub, one.Name, "GPU scores of 16 free GPUs again", func(s map[string]int32) bool {
			return s[clusterv1alpha1.ScoreGPUClusterAvailable] == 60
		})
	})

	t.Run("the agent's identity writes scores in its own namespace only", func(t *testing.T) {
		other := env.Namespace(t, env.Hub)
		s := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: clusterv1alpha1.ResourceUsageScoreName}}
		err := one.Agent.Hub().Current().Client.Create(ctx, s)
		if !apierrors.IsForbidden(err) {
			t.Errorf("the agent creating an AddOnPlacementScore in namespace %s: %v, want Forbidden", other, err)
		}
	})

	t.Run("disabled: the add-on stops and deletes its score", func(t *testing.T) {
		mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: resourceusage.Name}}
		if err := hub.Delete(ctx, mca); err != nil {
			t.Fatal(err)
		}
		waitScores(t, hub, one.Name, "the score deleted", func(s map[string]int32) bool { return s == nil })
	})

	t.Run("a score someone else wrote is left alone, and the add-on says why it cannot run", func(t *testing.T) {
		theirs := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: clusterv1alpha1.ResourceUsageScoreName}}
		testenv.Create(t, hub, theirs)
		theirs.Status.Scores = []clusterv1alpha1.AddOnPlacementScoreItem{{Name: clusterv1alpha1.ScoreGPUClusterAvailable, Value: 7}}
		if err := hub.Status().Update(ctx, theirs); err != nil {
			t.Fatal(err)
		}
		testenv.Create(t, hub, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: resourceusage.Name}})
		c := waitAvailable(t, hub, one.Name, metav1.ConditionFalse, builtin.ReasonFailed)
		want := "AddOnPlacementScore " + one.Name + "/resource-usage-score exists and was not written by the built-in add-on resource-usage"
		if !strings.Contains(c.Message, want) {
			t.Errorf("Available message %q does not say %q", c.Message, want)
		}
		if s, err := scores(ctx, hub, one.Name); err != nil || s[clusterv1alpha1.ScoreGPUClusterAvailable] != 7 || len(s) != 1 {
			t.Errorf("their score: %v (%v), want it as they wrote it", s, err)
		}
		mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: one.Name, Name: resourceusage.Name}}
		if err := hub.Delete(ctx, mca); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		if s, err := scores(ctx, hub, one.Name); err != nil || s == nil {
			t.Errorf("after disabling, their score: %v (%v), want it kept", s, err)
		}
	})
}
