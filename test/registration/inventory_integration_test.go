//go:build integration

package registration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/api/scheme"
	agentreg "github.com/flotilla/flotilla/internal/agent/registration"
	hubreg "github.com/flotilla/flotilla/internal/hub/registration"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestInventory runs an agent on spoke-2 (TestJoinAcceptHeartbeatRestartRotateDeny has spoke-1)
// and checks what it reports in the ManagedCluster's status: resources summed over the spoke's
// nodes, GPU claims by model, the spoke's ClusterClaims and its version; and that a steady
// cluster's status is not rewritten.
func TestInventory(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 2, CRDs: true})
	startHub(t, env)
	c := hubClient(t, env)
	ctx := context.Background()
	spoke := env.Spokes[1]
	const cluster = "spoke-2"
	const a100 = "NVIDIA-A100-SXM4-80GB"
	a100Count := clusterv1.GPUCountClaimName(a100)

	sc, err := client.New(spoke.RESTConfig(), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, cc := range []*clusterv1alpha1.ClusterClaim{
		{ObjectMeta: metav1.ObjectMeta{Name: "region.open-cluster-management.io"}, Spec: clusterv1alpha1.ClusterClaimSpec{Value: "us-east-1"}},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "internal.example.com", Labels: map[string]string{clusterv1alpha1.ClusterClaimSpokeOnlyLabel: "true"}},
			Spec:       clusterv1alpha1.ClusterClaimSpec{Value: "stays-on-the-spoke"},
		},
	} {
		if err := sc.Create(ctx, cc); err != nil {
			t.Fatalf("creating ClusterClaim %s on %s: %v", cc.Name, cluster, err)
		}
		t.Cleanup(func() { _ = sc.Delete(context.Background(), cc) })
	}
	gpuPool := localk8s.NodePool{
		Name: "a100", Count: 2, GPUModel: a100, GPUs: 8,
		CPU: resource.MustParse("96"), Memory: resource.MustParse("1Ti"),
	}
	env.AddNodes(t, spoke, gpuPool)

	runAgent(t, agentreg.Options{
		ClusterName: cluster, AgentID: "agent-2", Bootstrap: bootstrapConfig(t, env), Spoke: spoke.RESTConfig(),
		LeaseDurationSeconds: 1,
	})
	testenv.WaitFor(t, 30*time.Second, "a certificate request from the agent", func(ctx context.Context) (bool, string, error) {
		n := len(clusterCSRs(t, env, cluster))
		return n == 1, fmt.Sprintf("%d requests", n), nil
	})
	if _, err := hubreg.Accept(ctx, c, env.Hub.Client, cluster, hubreg.AcceptOptions{}); err != nil {
		t.Fatal(err)
	}

	// inventory waits until the status shows want GPUs and returns the cluster.
	inventory := func(t *testing.T, wantGPUs int) *clusterv1.ManagedCluster {
		t.Helper()
		var mc *clusterv1.ManagedCluster
		wantClaims := []clusterv1.ManagedClusterClaim{
			{Name: "region.open-cluster-management.io", Value: "us-east-1"},
			{Name: a100Count, Value: fmt.Sprint(wantGPUs)},
			{Name: clusterv1.GPUModelsClaim, Value: a100},
		}
		testenv.WaitFor(t, 60*time.Second, fmt.Sprintf("status to report %d A100s, the claims and the version", wantGPUs), func(ctx context.Context) (bool, string, error) {
			mc = &clusterv1.ManagedCluster{}
			if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
				return false, "", err
			}
			s := mc.Status
			gpus := s.Allocatable[clusterv1.ResourceNvidiaGPU]
			state := fmt.Sprintf("allocatable %s=%s, capacity %s=%s, version %q, claims %v",
				clusterv1.ResourceNvidiaGPU, gpus.String(), clusterv1.ResourceNvidiaGPU, quantityOf(s.Capacity, clusterv1.ResourceNvidiaGPU), s.Version.Kubernetes, s.ClusterClaims)
			done := gpus.Value() == int64(wantGPUs) && s.Version.Kubernetes == localk8s.KubernetesVersion &&
				slices.Equal(s.ClusterClaims, wantClaims)
			return done, state, nil
		})
		return mc
	}

	t.Run("GPUs, claims and version reach the hub", func(t *testing.T) {
		mc := inventory(t, 16)
		for _, name := range []clusterv1.ResourceName{clusterv1.ResourceCPU, clusterv1.ResourceMemory, "pods"} {
			if q, ok := mc.Status.Allocatable[name]; !ok || q.IsZero() {
				t.Errorf("status.allocatable[%s] = %v, want the spoke's total", name, mc.Status.Allocatable[name])
			}
		}
		if q := mc.Status.Capacity[clusterv1.ResourceNvidiaGPU]; q.Value() != 16 {
			t.Errorf("status.capacity[%s] = %s, want 16", clusterv1.ResourceNvidiaGPU, q.String())
		}
		for _, cl := range mc.Status.ClusterClaims {
			if strings.HasPrefix(cl.Name, "internal.") {
				t.Errorf("the spoke-only claim %s reached the hub", cl.Name)
			}
		}
	})

	t.Run("a steady cluster's status is not rewritten", func(t *testing.T) {
		// The hub's own controllers settle first: the default cluster set label, no taints, and
		// every condition observed at the generation those spec changes made.
		before := &clusterv1.ManagedCluster{}
		testenv.WaitFor(t, 20*time.Second, "the hub's controllers to settle on the cluster", func(ctx context.Context) (bool, string, error) {
			if err := c.Get(ctx, client.ObjectKey{Name: cluster}, before); err != nil {
				return false, "", err
			}
			_, labeled := before.Labels[clusterv1beta2.ClusterSetLabel]
			observed := true
			for _, cond := range before.Status.Conditions {
				observed = observed && cond.ObservedGeneration == before.Generation
			}
			// Every condition the agent and the hub set is there: the hub's acceptance and
			// clock conditions may come after the agent's first status.
			for _, want := range []string{clusterv1.ManagedClusterConditionJoined, clusterv1.ManagedClusterConditionAvailable,
				clusterv1.ManagedClusterConditionHubAccepted, clusterv1.ManagedClusterConditionClockSynced} {
				observed = observed && meta.FindStatusCondition(before.Status.Conditions, want) != nil
			}
			return labeled && len(before.Spec.Taints) == 0 && observed,
				fmt.Sprintf("labels=%v taints=%v generation=%d conditions=%v", before.Labels, before.Spec.Taints, before.Generation, before.Status.Conditions), nil
		})
		time.Sleep(4 * time.Second) // four lease periods, each with a status check
		after := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: cluster}, after); err != nil {
			t.Fatal(err)
		}
		if before.ResourceVersion != after.ResourceVersion {
			var writers []string
			for _, f := range after.ManagedFields {
				writers = append(writers, fmt.Sprintf("%s %s %s at %s", f.Manager, f.Operation, f.Subresource, f.Time))
			}
			t.Errorf("the ManagedCluster changed from resourceVersion %s to %s with nothing changed on the spoke; writers %v; status now %+v",
				before.ResourceVersion, after.ResourceVersion, writers, after.Status)
		}
	})

	t.Run("a new node is added to the sums", func(t *testing.T) {
		env.AddNodes(t, spoke, localk8s.NodePool{
			Name: "a100-extra", Count: 1, GPUModel: a100, GPUs: 8,
			CPU: resource.MustParse("96"), Memory: resource.MustParse("1Ti"),
		})
		mc := inventory(t, 24)
		if q := mc.Status.Capacity[clusterv1.ResourceNvidiaGPU]; q.Value() != 24 {
			t.Errorf("status.capacity[%s] = %s, want 24", clusterv1.ResourceNvidiaGPU, q.String())
		}
	})
}

func quantityOf(l clusterv1.ResourceList, name clusterv1.ResourceName) string {
	if q, ok := l[name]; ok {
		return q.String()
	}
	return "none"
}
