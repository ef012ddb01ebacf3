//go:build integration

package kueuequeues

import (
	"context"
	"fmt"
	"regexp"
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
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/agent/addon"
	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/agent/builtin/kueuequeues"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
	"github.com/flotilla/flotilla/internal/local/localk8s"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const (
	h100       = "NVIDIA-H100-80GB-HBM3"
	a100       = "NVIDIA-A100-SXM4-40GB"
	h100Flavor = "gpu-nvidia-h100-80gb-hbm3"
	a100Flavor = "gpu-nvidia-a100-sxm4-40gb"
	queueLabel = "kueue.x-k8s.io/queue-name"
	// resync is the add-on's (5 min by default), short for the test of edits put right.
	resync = 3 * time.Second
)

// The cluster's own nodes: 2 x 8 H100, 1 x 4 A100, 1 without GPUs.
var baseline = state{
	Flavors: []string{ // by name, as the API server lists them
		"cpu-only",
		a100Flavor + " " + kueuequeues.GPUProductLabel + "=" + a100,
		h100Flavor + " " + kueuequeues.GPUProductLabel + "=" + h100,
	},
	Quotas: []string{ // cpu-only first, then by name
		"cpu-only cpu=16 memory=64Gi nvidia.com/gpu=0",
		a100Flavor + " cpu=32 memory=256Gi nvidia.com/gpu=4",
		h100Flavor + " cpu=128 memory=1Ti nvidia.com/gpu=16",
	},
	LocalQueue: "default/user-queue -> cluster-queue",
}

func TestKueueQueues(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Spokes: 1, CRDs: true})
	env.StartHub(t, testenv.TestHubOptions())
	one := env.JoinSpokes(t)[0]
	hub := env.HubClient(t)
	spoke := newClient(t, one.Spoke)
	ctx := context.Background()
	for _, p := range []localk8s.NodePool{
		{Name: "h100", Count: 2, GPUModel: h100, GPUs: 8, CPU: resource.MustParse("64"), Memory: resource.MustParse("512Gi")},
		{Name: "a100", Count: 1, GPUModel: a100, GPUs: 4, CPU: resource.MustParse("32"), Memory: resource.MustParse("256Gi")},
		{Name: "cpu", Count: 1, CPU: resource.MustParse("16"), Memory: resource.MustParse("64Gi")},
	} {
		env.AddNodes(t, one.Spoke, p)
	}
	ad, err := addon.New(addon.Options{
		ClusterName: one.Name, AgentID: "agent-" + one.Name, Hub: one.Agent.Hub(), Spoke: one.Spoke.RESTConfig(),
		BuiltIns: builtin.NewManager(one.Name, one.Spoke.RESTConfig(), clock.RealClock{}, testr.New(t).WithName("builtin"),
			kueuequeues.AddOn{Resync: resync}),
		InitialBackoff: 200 * time.Millisecond, MaxBackoff: 2 * time.Second,
		Log: testr.New(t).WithName("addon"),
	})
	if err != nil {
		t.Fatal(err)
	}
	testenv.RunUntilCleanup(t, ad.Run)
	testenv.WaitFor(t, 30*time.Second, "ClusterManagementAddOn kueue-queues", func(ctx context.Context) (bool, string, error) {
		cma := &addonv1alpha1.ClusterManagementAddOn{}
		if err := hub.Get(ctx, client.ObjectKey{Name: kueuequeues.Name}, cma); err != nil {
			return false, "", client.IgnoreNotFound(err)
		}
		return cma.Labels[builtinaddon.Label] == kueuequeues.Name, fmt.Sprintf("labels %v", cma.Labels), nil
	})

	t.Run("without Kueue on the cluster the add-on says to install it", func(t *testing.T) {
		enable(t, hub, one.Name)
		c := waitAvailable(t, hub, one.Name, metav1.ConditionFalse, builtin.ReasonFailed)
		want := "install Kueue on " + one.Name + " (flotilla dev up --with kueue for local fleets)"
		if !strings.Contains(c.Message, want) {
			t.Errorf("Available message %q does not say %q", c.Message, want)
		}
	})

	bins, err := localk8s.FindKueue()
	if err != nil {
		t.Fatal(err)
	}
	kctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	kq, err := localk8s.StartKueue(kctx, localk8s.KueueOptions{Cluster: one.Spoke.Cluster, Binaries: bins})
	cancel()
	if err != nil {
		t.Fatalf("starting Kueue on %s: %v", one.Name, err)
	}
	t.Cleanup(kq.Stop)
	kueueUp := time.Now()

	t.Run("with Kueue: flavors, ClusterQueue and LocalQueue from the nodes; Kueue makes the queue Active", func(t *testing.T) {
		// The manager starts the add-on again within its backoff (10 s).
		waitState(t, spoke, "the add-on's objects for the cluster's nodes", 45*time.Second, baseline)
		t.Logf("objects written %s after Kueue was ready (the add-on's restart backoff is %s)",
			time.Since(kueueUp).Round(100*time.Millisecond), builtin.RestartBackoff)
		waitAvailable(t, hub, one.Name, metav1.ConditionTrue, builtin.ReasonRunning)
		testenv.WaitFor(t, 30*time.Second, "ClusterQueue cluster-queue Active", func(ctx context.Context) (bool, string, error) {
			cq := &kueuev1beta2.ClusterQueue{}
			if err := spoke.Get(ctx, client.ObjectKey{Name: kueuequeues.ClusterQueueName}, cq); err != nil {
				return false, "", err
			}
			return meta.IsStatusConditionTrue(cq.Status.Conditions, kueuev1beta2.ClusterQueueActive), fmt.Sprintf("%+v", cq.Status.Conditions), nil
		})
	})

	t.Run("a GPU Job in user-queue is admitted to the H100 flavor and completes", func(t *testing.T) {
		j := gpuJob("train", 8, 2*time.Second)
		create(t, spoke, j)
		testenv.WaitJob(t, spoke, j, "unsuspended", 60*time.Second, func(j *batchv1.Job) bool { return !ptr.Deref(j.Spec.Suspend, true) })
		w, err := testenv.JobWorkload(ctx, spoke, j)
		if err != nil || w == nil {
			t.Fatalf("no workload for job %s (%v)", j.Name, err)
		}
		if w.Status.Admission == nil || len(w.Status.Admission.PodSetAssignments) != 1 {
			t.Fatalf("workload %s: admission %+v, want one pod set assigned", w.Name, w.Status.Admission)
		}
		// 8 GPUs do not fit the A100 flavor (4): Kueue goes on to the H100 one.
		if got := w.Status.Admission.PodSetAssignments[0].Flavors[kueuequeues.GPUResource]; got != h100Flavor {
			t.Errorf("workload %s: GPU flavor %q, want %q", w.Name, got, h100Flavor)
		}
		testenv.WaitJob(t, spoke, j, "complete", 60*time.Second, testenv.JobComplete)
		pods, err := one.Spoke.Client.CoreV1().Pods(j.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + j.Name})
		if err != nil || len(pods.Items) != 1 {
			t.Fatalf("pods of job %s: %d (%v), want 1", j.Name, len(pods.Items), err)
		}
		if node := pods.Items[0].Spec.NodeName; !strings.HasPrefix(node, "h100-") {
			t.Errorf("the job's pod ran on %s, want an H100 node (the flavor's nodeLabels)", node)
		}
	})

	t.Run("a node added grows the quota; removed, it shrinks again", func(t *testing.T) {
		grown := baseline
		grown.Quotas = []string{baseline.Quotas[0], baseline.Quotas[1], h100Flavor + " cpu=192 memory=1536Gi nvidia.com/gpu=24"}
		start := time.Now()
		pool := localk8s.NodePool{Name: "h100-extra", Count: 1, GPUModel: h100, GPUs: 8, CPU: resource.MustParse("64"), Memory: resource.MustParse("512Gi")}
		if err := localk8s.CreateNodes(ctx, one.Spoke.Client, pool); err != nil {
			t.Fatal(err)
		}
		waitState(t, spoke, "the H100 quota with a third node", 30*time.Second, grown)
		t.Logf("quota grown %s after the node was created (debounce %s)", time.Since(start).Round(10*time.Millisecond), kueuequeues.DefaultDebounce)
		if err := one.Spoke.Client.CoreV1().Nodes().Delete(ctx, "h100-extra-0", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitState(t, spoke, "the H100 quota back to two nodes", 30*time.Second, baseline)
	})

	t.Run("an edited ClusterQueue or flavor is put right at the next resync", func(t *testing.T) {
		cq := &kueuev1beta2.ClusterQueue{}
		if err := spoke.Get(ctx, client.ObjectKey{Name: kueuequeues.ClusterQueueName}, cq); err != nil {
			t.Fatal(err)
		}
		cq.Spec.ResourceGroups[0].Flavors[0].Resources[2].NominalQuota = resource.MustParse("1000")
		if err := spoke.Update(ctx, cq); err != nil {
			t.Fatal(err)
		}
		f := &kueuev1beta2.ResourceFlavor{}
		if err := spoke.Get(ctx, client.ObjectKey{Name: h100Flavor}, f); err != nil {
			t.Fatal(err)
		}
		f.Spec.NodeLabels = map[string]string{kueuequeues.GPUProductLabel: "something-else"}
		if err := spoke.Update(ctx, f); err != nil {
			t.Fatal(err)
		}
		waitState(t, spoke, "the ClusterQueue and flavor as the nodes call for", 3*resync, baseline)
	})

	t.Run("GPU models that need sanitizing, or sanitize alike, get valid flavors of their own", func(t *testing.T) {
		// Both sanitize to gpu-tesla-t4-16gb; each then ends in its model's hash.
		models := []string{"Tesla_T4.16GB", "tesla-t4-16gb"}
		for i, m := range models {
			env.AddNodes(t, one.Spoke, localk8s.NodePool{Name: fmt.Sprintf("t4-%d", i), Count: 1, GPUModel: m, GPUs: i + 1,
				CPU: resource.MustParse("8"), Memory: resource.MustParse("32Gi")})
		}
		label := regexp.MustCompile(`^gpu-tesla-t4-16gb-[0-9a-f]{8}$`)
		names := map[string]string{}
		// The add-on writes the flavors, then the ClusterQueue: wait for both.
		testenv.WaitFor(t, 30*time.Second, "flavors and quotas of both T4 models", func(ctx context.Context) (bool, string, error) {
			got, err := read(ctx, spoke)
			if err != nil || len(got.Flavors) != 5 {
				return false, fmt.Sprintf("%+v", got), err
			}
			clear(names)
			quotas := 0
			for _, f := range got.Flavors {
				name, labels, _ := strings.Cut(f, " ")
				for i, m := range models {
					if labels != kueuequeues.GPUProductLabel+"="+m {
						continue
					}
					if !label.MatchString(name) {
						return false, "", fmt.Errorf("model %q: flavor %q, want gpu-tesla-t4-16gb-<hash>", m, name)
					}
					names[m] = name
					if contains(got.Quotas, fmt.Sprintf("%s cpu=8 memory=32Gi nvidia.com/gpu=%d", name, i+1)) {
						quotas++
					}
				}
			}
			return quotas == 2, fmt.Sprintf("%+v", got), nil
		})
		if len(names) != 2 || names[models[0]] == names[models[1]] {
			t.Errorf("flavors by model %v, want one each, distinct", names)
		}
		waitActive(t, spoke)
	})

	t.Run("flavors of models no node has any more are deleted", func(t *testing.T) {
		waitState(t, spoke, "the flavors of the cluster's own nodes only", 30*time.Second, baseline)
	})

	t.Run("switched off: its objects are gone", func(t *testing.T) {
		disable(t, hub, one.Name)
		waitState(t, spoke, "no flavors or queues", 60*time.Second, state{})
	})

	t.Run("someone else's ClusterQueue and LocalQueue are left alone and reported", func(t *testing.T) {
		theirCQ := &kueuev1beta2.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: kueuequeues.ClusterQueueName},
			Spec: kueuev1beta2.ClusterQueueSpec{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "theirs"}}}}
		theirLQ := &kueuev1beta2.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: kueuequeues.LocalQueueName},
			Spec: kueuev1beta2.LocalQueueSpec{ClusterQueue: kueuequeues.ClusterQueueName}}
		create(t, spoke, theirCQ)
		create(t, spoke, theirLQ)
		enable(t, hub, one.Name)
		c := waitAvailable(t, hub, one.Name, metav1.ConditionFalse, builtin.ReasonFailed)
		for _, want := range []string{
			"ClusterQueue cluster-queue on cluster " + one.Name + " exists and was not written by the built-in add-on kueue-queues",
			"LocalQueue default/user-queue on cluster " + one.Name + " exists and was not written by the built-in add-on kueue-queues",
			"delete or rename it",
		} {
			if !strings.Contains(c.Message, want) {
				t.Errorf("Available message %q does not say %q", c.Message, want)
			}
		}
		// The flavors are written all the same.
		waitState(t, spoke, "the add-on's flavors beside their queues", 30*time.Second,
			state{Flavors: baseline.Flavors, Quotas: []string{"theirs"}, LocalQueue: "theirs"})
		cq := &kueuev1beta2.ClusterQueue{}
		if err := spoke.Get(ctx, client.ObjectKeyFromObject(theirCQ), cq); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(theirCQ.Spec.NamespaceSelector, cq.Spec.NamespaceSelector); diff != "" || len(cq.Spec.ResourceGroups) != 0 {
			t.Errorf("their ClusterQueue changed: namespaceSelector (-want +got):\n%s\nresourceGroups %v", diff, cq.Spec.ResourceGroups)
		}

		disable(t, hub, one.Name)
		waitState(t, spoke, "the add-on's flavors gone, their queues kept", 60*time.Second,
			state{Quotas: []string{"theirs"}, LocalQueue: "theirs"})
	})
}

// state is what the spoke holds of the add-on's names: the add-on's flavors ("name label=value",
// by name), the quotas of ClusterQueue cluster-queue ("theirs" when it is not the add-on's) and
// LocalQueue default/user-queue ("namespace/name -> cluster queue", or "theirs").
type state struct {
	Flavors    []string
	Quotas     []string
	LocalQueue string
}

func read(ctx context.Context, c client.Client) (state, error) {
	var s state
	fl := &kueuev1beta2.ResourceFlavorList{}
	if err := c.List(ctx, fl, client.MatchingLabels{builtinaddon.Label: kueuequeues.Name}); err != nil {
		return s, err
	}
	for _, f := range fl.Items {
		row := f.Name
		for k, v := range f.Spec.NodeLabels {
			row += " " + k + "=" + v
		}
		s.Flavors = append(s.Flavors, row)
	}
	cq := &kueuev1beta2.ClusterQueue{}
	switch err := c.Get(ctx, client.ObjectKey{Name: kueuequeues.ClusterQueueName}, cq); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return s, err
	case cq.Labels[builtinaddon.Label] != kueuequeues.Name:
		s.Quotas = []string{"theirs"}
	default:
		for _, rg := range cq.Spec.ResourceGroups {
			for _, f := range rg.Flavors {
				row := string(f.Name)
				for _, r := range f.Resources {
					row += " " + string(r.Name) + "=" + r.NominalQuota.String()
				}
				s.Quotas = append(s.Quotas, row)
			}
		}
	}
	lq := &kueuev1beta2.LocalQueue{}
	switch err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: kueuequeues.LocalQueueName}, lq); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return s, err
	case lq.Labels[builtinaddon.Label] != kueuequeues.Name:
		s.LocalQueue = "theirs"
	default:
		s.LocalQueue = fmt.Sprintf("%s/%s -> %s", lq.Namespace, lq.Name, lq.Spec.ClusterQueue)
	}
	return s, nil
}

func waitState(t *testing.T, c client.Client, what string, timeout time.Duration, want state) {
	t.Helper()
	testenv.WaitFor(t, timeout, what, func(ctx context.Context) (bool, string, error) {
		got, err := read(ctx, c)
		if err != nil {
			return false, "", err
		}
		diff := cmp.Diff(want, got)
		return diff == "", "(-want +got)\n" + diff, nil
	})
}

func waitActive(t *testing.T, c client.Client) {
	t.Helper()
	testenv.WaitFor(t, 30*time.Second, "ClusterQueue cluster-queue Active", func(ctx context.Context) (bool, string, error) {
		cq := &kueuev1beta2.ClusterQueue{}
		if err := c.Get(ctx, client.ObjectKey{Name: kueuequeues.ClusterQueueName}, cq); err != nil {
			return false, "", err
		}
		return meta.IsStatusConditionTrue(cq.Status.Conditions, kueuev1beta2.ClusterQueueActive), fmt.Sprintf("%+v", cq.Status.Conditions), nil
	})
}

func contains(rows []string, row string) bool {
	for _, r := range rows {
		if r == row {
			return true
		}
	}
	return false
}

func enable(t *testing.T, hub client.Client, cluster string) {
	t.Helper()
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: kueuequeues.Name}}
	if err := hub.Create(context.Background(), mca); err != nil {
		t.Fatal(err)
	}
}

func disable(t *testing.T, hub client.Client, cluster string) {
	t.Helper()
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: kueuequeues.Name}}
	if err := hub.Delete(context.Background(), mca); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "ManagedClusterAddOn kueue-queues gone", func(ctx context.Context) (bool, string, error) {
		err := hub.Get(ctx, client.ObjectKeyFromObject(mca), mca)
		return apierrors.IsNotFound(err), fmt.Sprintf("%v", err), client.IgnoreNotFound(err)
	})
}

func waitAvailable(t *testing.T, c client.Client, cluster string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	t.Helper()
	var got *metav1.Condition
	testenv.WaitFor(t, 45*time.Second, "ManagedClusterAddOn kueue-queues Available "+string(status), func(ctx context.Context) (bool, string, error) {
		a := &addonv1alpha1.ManagedClusterAddOn{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: kueuequeues.Name}, a); err != nil {
			return false, "", err
		}
		got = meta.FindStatusCondition(a.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable)
		return got != nil && got.Status == status && got.Reason == reason, fmt.Sprintf("%+v", got), nil
	})
	return got
}
