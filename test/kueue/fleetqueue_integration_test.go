//go:build integration

package kueue

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	queuev1alpha1 "github.com/flotilla/flotilla/api/queue/v1alpha1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/fleetqueue"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

const (
	fqH100 = "NVIDIA-H100-80GB-HBM3"
	fqT4   = "Tesla-T4"
)

// figures writes cluster's ResourceUsage: gpus per model, 64 cores and 256Gi, valid for an hour.
func (f *fixture) figures(t *testing.T, cluster string, gpus map[string]int64) {
	t.Helper()
	ctx := context.Background()
	if err := f.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	u := &usagev1alpha1.ResourceUsage{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: usagev1alpha1.ResourceUsageName}}
	testenv.Create(t, f.c, u)
	q := func(n int64) resource.Quantity { return *resource.NewQuantity(n, resource.DecimalSI) }
	now := metav1.Now()
	u.Status = usagev1alpha1.ResourceUsageStatus{ObservedTime: &now, ValidUntil: &metav1.Time{Time: now.Add(time.Hour)}, Nodes: 2,
		Resources: []usagev1alpha1.ResourceFigures{{Name: "cpu", Capacity: q(64), Allocatable: q(64)}, {Name: "memory", Capacity: resource.MustParse("256Gi"), Allocatable: resource.MustParse("256Gi")}}}
	for m, n := range gpus {
		u.Status.Resources = append(u.Status.Resources, usagev1alpha1.ResourceFigures{Name: usagev1alpha1.ResourceNvidiaGPU, Model: m, Capacity: q(n), Allocatable: q(n), Free: q(n)})
	}
	if err := f.c.Status().Update(ctx, u); err != nil {
		t.Fatal(err)
	}
}

// pool is the cohort's GPU quota per flavor, "" when the cohort is missing.
func (f *fixture) pool(ctx context.Context, name string) (map[string]int64, error) {
	c := &kueuev1beta2.Cohort{}
	if err := f.c.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	out := map[string]int64{}
	for _, rg := range c.Spec.ResourceGroups {
		for _, fl := range rg.Flavors {
			for _, r := range fl.Resources {
				if r.Name == usagev1alpha1.ResourceNvidiaGPU {
					out[string(fl.Name)] = r.NominalQuota.Value()
				}
			}
		}
	}
	return out, nil
}

func TestFleetQueue(t *testing.T) {
	f := setup(t, "fq")
	f.startHub(t, false)
	ctx := context.Background()
	for _, n := range []string{"research", "prod"} {
		if err := f.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	f.figures(t, "fq-east", map[string]int64{fqH100: 16})
	f.figures(t, "fq-west", map[string]int64{fqH100: 8, fqT4: 4})
	testenv.Create(t, f.c, &kueuev1beta2.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "fq-mk"},
		Spec: kueuev1beta2.AdmissionCheckSpec{ControllerName: kueuev1beta2.MultiKueueControllerName,
			Parameters: &kueuev1beta2.AdmissionCheckParametersReference{APIGroup: kueuev1beta2.GroupVersion.Group, Kind: "MultiKueueConfig", Name: "fq-workers"}}})
	cfg := &kueuev1beta2.MultiKueueConfig{ObjectMeta: metav1.ObjectMeta{Name: "fq-workers"},
		Spec: kueuev1beta2.MultiKueueConfigSpec{Clusters: []string{"fq-east", "fq-west"}}}
	testenv.Create(t, f.c, cfg)
	// A team's own ClusterQueue, of the name the FleetQueue would give its team prod.
	own := &kueuev1beta2.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "ml-prod"}, Spec: kueuev1beta2.ClusterQueueSpec{
		ResourceGroups: []kueuev1beta2.ResourceGroup{{CoveredResources: []corev1.ResourceName{"cpu"},
			Flavors: []kueuev1beta2.FlavorQuotas{{Name: "theirs", Resources: []kueuev1beta2.ResourceQuota{{Name: "cpu", NominalQuota: resource.MustParse("3")}}}}}}}}
	testenv.Create(t, f.c, own)

	fq := &queuev1alpha1.FleetQueue{ObjectMeta: metav1.ObjectMeta{Name: "ml"}, Spec: queuev1alpha1.FleetQueueSpec{AdmissionCheck: "fq-mk",
		Teams: []queuev1alpha1.Team{
			{Name: "research", Namespace: "research", Weight: resource.MustParse("2"), Guaranteed: []queuev1alpha1.GuaranteedGPUs{{Model: fqH100, GPUs: 8}}},
			{Name: "prod", Namespace: "prod", Weight: resource.MustParse("1")},
		}}}
	testenv.Create(t, f.c, fq)
	h100, t4 := "ml-gpu-nvidia-h100-80gb-hbm3", "ml-gpu-tesla-t4"
	waitPool := func(t *testing.T, what string, want map[string]int64) time.Duration {
		t.Helper()
		start := time.Now()
		testenv.WaitFor(t, wait, what, func(ctx context.Context) (bool, string, error) {
			got, err := f.pool(ctx, "ml")
			return err == nil && fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprintf("cohort ml's GPUs %v, want %v", got, want), err
		})
		return time.Since(start)
	}
	waitPool(t, "the cohort to hold the workers' GPUs less research's guarantee", map[string]int64{"ml-cpu-only": 0, h100: 16, t4: 4})

	t.Run("a team's own ClusterQueue is left alone and named", func(t *testing.T) {
		testenv.WaitFor(t, wait, "FleetQueue ml's Ready condition to name ClusterQueue ml-prod", func(ctx context.Context) (bool, string, error) {
			if err := f.c.Get(ctx, client.ObjectKeyFromObject(fq), fq); err != nil {
				return false, "", err
			}
			c := meta.FindStatusCondition(fq.Status.Conditions, queuev1alpha1.ConditionReady)
			return c != nil && c.Reason == queuev1alpha1.ReasonNotOurs && strings.Contains(c.Message, "ml-prod"), fmt.Sprintf("%+v", c), nil
		})
		got := &kueuev1beta2.ClusterQueue{}
		if err := f.c.Get(ctx, client.ObjectKey{Name: "ml-prod"}, got); err != nil {
			t.Fatal(err)
		}
		if got.Spec.CohortName != "" || len(got.OwnerReferences) != 0 || got.Labels[fleetqueue.FleetQueueLabel] != "" || got.Spec.ResourceGroups[0].Flavors[0].Name != "theirs" {
			t.Errorf("the team's own ClusterQueue ml-prod was changed: %+v", got)
		}
		research := &kueuev1beta2.ClusterQueue{}
		if err := f.c.Get(ctx, client.ObjectKey{Name: "ml-research"}, research); err != nil {
			t.Fatal(err)
		}
		if research.Spec.CohortName != "ml" || research.Spec.FairSharing == nil || research.Spec.FairSharing.Weight.String() != "2" {
			t.Errorf("ClusterQueue ml-research: cohort %q, fair sharing %+v; want ml, weight 2", research.Spec.CohortName, research.Spec.FairSharing)
		}
		lq := &kueuev1beta2.LocalQueue{}
		if err := f.c.Get(ctx, client.ObjectKey{Namespace: "research", Name: fleetqueue.DefaultLocalQueue}, lq); err != nil || lq.Spec.ClusterQueue != "ml-research" {
			t.Errorf("LocalQueue research/user-queue: %+v, %v", lq.Spec, err)
		}
	})

	t.Run("a worker leaving the config takes its GPUs out of the quota", func(t *testing.T) {
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(cfg), cfg); err != nil {
			t.Fatal(err)
		}
		cfg.Spec.Clusters = []string{"fq-east"} // as the hub writes it when fq-west is declared lost
		if err := f.c.Update(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		took := waitPool(t, "the cohort to lose fq-west's GPUs", map[string]int64{"ml-cpu-only": 0, h100: 8})
		t.Logf("quota followed the worker's loss in %s", took.Round(time.Millisecond))
		// The hub deletes the flavor after it has updated the ClusterQueues, and Kueue's
		// resource-in-use finalizer holds it until Kueue sees no ClusterQueue use it: wait.
		waitGone(t, f.c, &kueuev1beta2.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: t4}})
		cfg.Spec.Clusters = []string{"fq-east", "fq-west"}
		if err := f.c.Update(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		took = waitPool(t, "the cohort to count fq-west again", map[string]int64{"ml-cpu-only": 0, h100: 16, t4: 4})
		t.Logf("quota followed the worker's return in %s", took.Round(time.Millisecond))
	})

	t.Run("a bad spec is refused with the field and the fix, and nothing changes", func(t *testing.T) {
		// The hub writes the FleetQueue's status meanwhile: read, change and write again on a
		// conflict, as any client of an object a controller also writes.
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := f.c.Get(ctx, client.ObjectKeyFromObject(fq), fq); err != nil {
				return err
			}
			fq.Spec.Teams[1].Weight = resource.MustParse("0")
			fq.Spec.Teams[0].Guaranteed[0].GPUs = 4
			return f.c.Update(ctx, fq)
		}); err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, wait, "FleetQueue ml to be Invalid", func(ctx context.Context) (bool, string, error) {
			if err := f.c.Get(ctx, client.ObjectKeyFromObject(fq), fq); err != nil {
				return false, "", err
			}
			c := meta.FindStatusCondition(fq.Status.Conditions, queuev1alpha1.ConditionReady)
			return c != nil && c.Reason == queuev1alpha1.ReasonInvalid && strings.Contains(c.Message, "spec.teams[1].weight is 0") &&
				strings.Contains(c.Message, "nothing was changed"), fmt.Sprintf("%+v", c), nil
		})
		got, err := f.pool(ctx, "ml")
		if err != nil || fmt.Sprint(got) != fmt.Sprint(map[string]int64{"ml-cpu-only": 0, h100: 16, t4: 4}) {
			t.Errorf("cohort ml's GPUs after a refused spec: %v (%v); want them unchanged", got, err)
		}
	})
}
