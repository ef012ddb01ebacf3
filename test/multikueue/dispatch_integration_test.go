//go:build integration

package multikueue

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/agent/builtin/kueuequeues"
	"github.com/flotilla/flotilla/internal/agent/builtin/resourceusage"
	"github.com/flotilla/flotilla/internal/localk8s"
	"github.com/flotilla/flotilla/internal/testenv"
)

const (
	h100       = "NVIDIA-H100-80GB-HBM3"
	queueLabel = "kueue.x-k8s.io/queue-name"
	// mkCheck is the hub's MultiKueue AdmissionCheck; placementCheck OCM's placement check,
	// whose placement and MultiKueueConfig share its name.
	mkCheck        = "mk-dispatch"
	placementCheck = "mk-gpu"
)

// hubQueues makes the hub's side of MultiKueue as a user would: a flavor, a ClusterQueue whose
// admission check is MultiKueue's with the placement's MultiKueueConfig, its LocalQueue named as
// the workers' (the queue add-on's), and OCM's placement check.
func (f *fleet) hubQueues(t *testing.T) {
	t.Helper()
	testenv.Create(t, f.c, &kueuev1beta2.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: mkCheck},
		Spec: kueuev1beta2.AdmissionCheckSpec{ControllerName: kueuev1beta2.MultiKueueControllerName,
			Parameters: &kueuev1beta2.AdmissionCheckParametersReference{APIGroup: kueuev1beta2.GroupVersion.Group, Kind: "MultiKueueConfig", Name: placementCheck}}})
	testenv.Create(t, f.c, &kueuev1beta2.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "hub-flavor"}})
	quota := func(name corev1.ResourceName, q string) kueuev1beta2.ResourceQuota {
		return kueuev1beta2.ResourceQuota{Name: name, NominalQuota: resource.MustParse(q)}
	}
	testenv.Create(t, f.c, &kueuev1beta2.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: kueuequeues.ClusterQueueName},
		Spec: kueuev1beta2.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{},
			ResourceGroups: []kueuev1beta2.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, localk8s.GPUResource},
				Flavors: []kueuev1beta2.FlavorQuotas{{Name: "hub-flavor", Resources: []kueuev1beta2.ResourceQuota{
					quota(corev1.ResourceCPU, "1000"), quota(corev1.ResourceMemory, "10Ti"), quota(localk8s.GPUResource, "1000")}}}}},
			AdmissionChecksStrategy: &kueuev1beta2.AdmissionChecksStrategy{AdmissionChecks: []kueuev1beta2.AdmissionCheckStrategyRule{{Name: mkCheck}}},
		}})
	testenv.Create(t, f.c, &kueuev1beta2.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: kueuequeues.LocalQueueNS, Name: kueuequeues.LocalQueueName},
		Spec: kueuev1beta2.LocalQueueSpec{ClusterQueue: kueuequeues.ClusterQueueName}})
}

// rankedPlacement makes the placement of the placement check: the clusters labelled
// mk-gpu=worker, ranked by the AddOnPlacementScore mk/rank, and the check.
func (f *fleet) rankedPlacement(t *testing.T, ranks map[string]int32) {
	t.Helper()
	ctx := context.Background()
	for cluster, v := range ranks {
		s := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Name: "mk", Namespace: cluster}}
		testenv.Create(t, f.c, s)
		s.Status.Scores = []clusterv1alpha1.AddOnPlacementScoreItem{{Name: "rank", Value: v}}
		if err := f.c.Status().Update(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Create(t, f.c, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: placementCheck}, Spec: clusterv1beta1.PlacementSpec{
		Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"mk-gpu": "worker"}}}}},
		PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeExact,
			Configurations: []clusterv1beta1.PrioritizerConfig{{Weight: ptr.To[int32](1), ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{
				Type: clusterv1beta1.ScoreCoordinateTypeAddOn, AddOn: &clusterv1beta1.AddOnScore{ResourceName: "mk", ScoreName: "rank"}}}}},
	}})
	testenv.Create(t, f.c, &kueuev1beta2.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: placementCheck},
		Spec: kueuev1beta2.AdmissionCheckSpec{ControllerName: "open-cluster-management.io/placement", Parameters: &kueuev1beta2.AdmissionCheckParametersReference{
			APIGroup: clusterv1beta1.GroupVersion.Group, Kind: "Placement", Name: placementCheck}}})
}

// enable switches the built-in add-on on for every joined cluster.
func (f *fleet) enable(t *testing.T, addOn string) {
	t.Helper()
	for _, j := range f.joined {
		testenv.Create(t, f.c, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: j.Name, Name: addOn}})
	}
}

// gpuJob is a Job for the hub's LocalQueue of pods pods of gpus H100s each, which kwok on the
// worker completes after runFor.
func gpuJob(name string, pods int32, gpus int64, runFor time.Duration) *batchv1.Job {
	q := *resource.NewQuantity(gpus, resource.DecimalSI)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: kueuequeues.LocalQueueNS, Name: name, Labels: map[string]string{queueLabel: kueuequeues.LocalQueueName}},
		Spec: batchv1.JobSpec{
			Parallelism: ptr.To(pods), Completions: ptr.To(pods), BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"pod-complete.stage.kwok.x-k8s.io/delay": runFor.String()}},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, NodeSelector: map[string]string{"nvidia.com/gpu.product": h100},
					Containers: []corev1.Container{{Name: "train", Image: "trainer", Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{localk8s.GPUResource: q, corev1.ResourceCPU: resource.MustParse("1")},
						Limits:   corev1.ResourceList{localk8s.GPUResource: q}}}}},
			},
		},
	}
}

// workloadOf is the hub's Workload of job j.
func (f *fleet) workloadOf(ctx context.Context, j *batchv1.Job) (*kueuev1beta2.Workload, error) {
	got := &batchv1.Job{}
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(j), got); err != nil {
		return nil, err
	}
	l := &kueuev1beta2.WorkloadList{}
	if err := f.c.List(ctx, l, client.InNamespace(j.Namespace)); err != nil {
		return nil, err
	}
	for i := range l.Items {
		for _, o := range l.Items[i].OwnerReferences {
			if o.UID == got.UID {
				return &l.Items[i], nil
			}
		}
	}
	return nil, nil
}

// waitRunsOn waits until the hub's workload of j is admitted on worker, and returns how long
// that took from start.
func (f *fleet) waitRunsOn(t *testing.T, j *batchv1.Job, worker string, timeout time.Duration, start time.Time) time.Duration {
	t.Helper()
	var took time.Duration
	testenv.WaitFor(t, timeout, fmt.Sprintf("job %s to be admitted on %s", j.Name, worker), func(ctx context.Context) (bool, string, error) {
		wl, err := f.workloadOf(ctx, j)
		if err != nil || wl == nil {
			return false, "no workload yet", client.IgnoreNotFound(err)
		}
		took = time.Since(start)
		return ptr.Deref(wl.Status.ClusterName, "") == worker, fmt.Sprintf("clusterName %q, nominated %v, checks %+v",
			ptr.Deref(wl.Status.ClusterName, ""), wl.Status.NominatedClusterNames, wl.Status.AdmissionChecks), nil
	})
	return took
}

// waitComplete waits until job j on the hub reports completion, as MultiKueue copies it back.
func (f *fleet) waitComplete(t *testing.T, j *batchv1.Job, timeout time.Duration) {
	t.Helper()
	testenv.WaitFor(t, timeout, "job "+j.Name+" to complete on the hub", func(ctx context.Context) (bool, string, error) {
		got := &batchv1.Job{}
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(j), got); err != nil {
			return false, "", err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("succeeded %d, conditions %+v", got.Status.Succeeded, got.Status.Conditions), nil
	})
}

func testDispatch(t *testing.T, f *fleet) {
	one, two := f.joined[0].Name, f.joined[1].Name
	for _, j := range f.joined {
		f.env.AddNodes(t, j.Spoke, localk8s.NodePool{Name: "h100", Count: 2, GPUModel: h100, GPUs: 8,
			CPU: resource.MustParse("64"), Memory: resource.MustParse("512Gi")})
	}
	f.enable(t, kueuequeues.Name)
	f.enable(t, resourceusage.Name)
	f.bindSet(t, "mk-gpu", map[string]map[string]string{one: {"mk-gpu": "worker"}, two: {"mk-gpu": "worker"}})
	// The second spoke ranks first: the choice follows the placement, not the names.
	f.rankedPlacement(t, map[string]int32{one: 10, two: 90})
	f.hubQueues(t)
	f.waitActive(t, placementCheck, metav1.ConditionTrue, two, one)
	testenv.WaitFor(t, wait, "Kueue on the hub to find both workers active", func(ctx context.Context) (bool, string, error) {
		for _, name := range []string{one, two} {
			mkc := &kueuev1beta2.MultiKueueCluster{}
			if err := f.c.Get(ctx, client.ObjectKey{Name: name}, mkc); err != nil {
				return false, "", client.IgnoreNotFound(err)
			}
			if c := findCondition(mkc.Status.Conditions, kueuev1beta2.MultiKueueClusterActive); c == nil || c.Status != metav1.ConditionTrue {
				return false, fmt.Sprintf("%s: %+v", name, c), nil
			}
		}
		return true, "", nil
	})
	hub := f.c

	t.Run("a job submitted once to the hub runs on the first-ranked worker", func(t *testing.T) {
		first := gpuJob("mk-first", 2, 8, 5*time.Minute)
		testenv.Create(t, hub, first)
		took := f.waitRunsOn(t, first, two, wait, time.Now())
		t.Logf("job %s (2 pods x 8 GPUs) admitted on %s %s after submission", first.Name, two, took.Round(time.Millisecond))

		t.Run("that worker full, the next job goes to the other", func(t *testing.T) {
			next := gpuJob("mk-next", 1, 8, 2*time.Second)
			testenv.Create(t, hub, next)
			took := f.waitRunsOn(t, next, one, wait, time.Now())
			t.Logf("job %s admitted on %s %s after submission", next.Name, one, took.Round(time.Millisecond))
			f.waitComplete(t, next, wait)
		})
	})
}

func findCondition(cs []metav1.Condition, t string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}
