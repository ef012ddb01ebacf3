package fleetqueue

import (
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	queuev1alpha1 "github.com/flotilla/flotilla/api/queue/v1alpha1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

const (
	h100 = "NVIDIA-H100-80GB-HBM3"
	t4   = "Tesla-T4"
)

// worker is a worker with gpus GPUs of each model given as model=count, and 64 cores, 256Gi.
func worker(name string, gpus map[string]int64) Worker {
	q := func(n int64) resource.Quantity { return *resource.NewQuantity(n, resource.DecimalSI) }
	st := &usagev1alpha1.ResourceUsageStatus{Resources: []usagev1alpha1.ResourceFigures{
		{Name: "cpu", Allocatable: q(64)}, {Name: "memory", Allocatable: resource.MustParse("256Gi")},
	}}
	for m, n := range gpus {
		st.Resources = append(st.Resources, usagev1alpha1.ResourceFigures{Name: usagev1alpha1.ResourceNvidiaGPU, Model: m, Allocatable: q(n)})
	}
	return Worker{Name: name, Status: st}
}

func fleetQueue(teams ...queuev1alpha1.Team) *queuev1alpha1.FleetQueue {
	return &queuev1alpha1.FleetQueue{ObjectMeta: metav1.ObjectMeta{Name: "ml"},
		Spec: queuev1alpha1.FleetQueueSpec{AdmissionCheck: "mk", Teams: teams}}
}

func team(name string, weight string, guaranteed ...queuev1alpha1.GuaranteedGPUs) queuev1alpha1.Team {
	return queuev1alpha1.Team{Name: name, Namespace: name, Weight: resource.MustParse(weight), Guaranteed: guaranteed}
}

// gpuQuotas gives each object's GPU quota per flavor, "name/flavor" = GPUs.
func gpuQuotas(d Desired) map[string]int64 {
	out := map[string]int64{}
	for _, fl := range d.Cohort.Spec.ResourceGroups[0].Flavors {
		out["cohort/"+string(fl.Name)] = fl.Resources[2].NominalQuota.Value()
	}
	for _, cq := range d.ClusterQueues {
		for _, fl := range cq.Spec.ResourceGroups[0].Flavors {
			out[cq.Name+"/"+string(fl.Name)] = fl.Resources[2].NominalQuota.Value()
		}
	}
	return out
}

func TestCompute(t *testing.T) {
	fleet := Count([]Worker{worker("east", map[string]int64{h100: 16}), worker("west", map[string]int64{h100: 8, t4: 4})})
	if diff := cmp.Diff([]queuev1alpha1.ModelQuota{
		{Model: h100, Flavor: "gpu-nvidia-h100-80gb-hbm3", GPUs: 24, Workers: []string{"east", "west"}},
		{Model: t4, Flavor: "gpu-tesla-t4", GPUs: 4, Workers: []string{"west"}},
	}, fleet.Models); diff != "" {
		t.Errorf("Count models (-want +got):\n%s", diff)
	}
	if fleet.CPU.Value() != 128 || fleet.Workers != 2 {
		t.Errorf("Count: %d workers, %s cpu; want 2, 128", fleet.Workers, fleet.CPU.String())
	}
	h, tf := "ml-gpu-nvidia-h100-80gb-hbm3", "ml-gpu-tesla-t4"
	cases := map[string]struct {
		fq       *queuev1alpha1.FleetQueue
		want     map[string]int64
		problems []string
	}{
		"all shared": {
			fq:   fleetQueue(team("research", "2"), team("prod", "1")),
			want: map[string]int64{"cohort/ml-cpu-only": 0, "cohort/" + h: 24, "cohort/" + tf: 4, "ml-research/ml-cpu-only": 0, "ml-research/" + h: 0, "ml-research/" + tf: 0, "ml-prod/ml-cpu-only": 0, "ml-prod/" + h: 0, "ml-prod/" + tf: 0},
		},
		"a guarantee comes out of the pool": {
			fq:   fleetQueue(team("research", "2", queuev1alpha1.GuaranteedGPUs{Model: h100, GPUs: 8}), team("prod", "1")),
			want: map[string]int64{"cohort/ml-cpu-only": 0, "cohort/" + h: 16, "cohort/" + tf: 4, "ml-research/ml-cpu-only": 0, "ml-research/" + h: 8, "ml-research/" + tf: 0, "ml-prod/ml-cpu-only": 0, "ml-prod/" + h: 0, "ml-prod/" + tf: 0},
		},
		"guarantees above the fleet are scaled down and reported": {
			fq:       fleetQueue(team("research", "2", queuev1alpha1.GuaranteedGPUs{Model: h100, GPUs: 24}), team("prod", "1", queuev1alpha1.GuaranteedGPUs{Model: h100, GPUs: 24})),
			want:     map[string]int64{"cohort/ml-cpu-only": 0, "cohort/" + h: 0, "cohort/" + tf: 4, "ml-research/ml-cpu-only": 0, "ml-research/" + h: 12, "ml-research/" + tf: 0, "ml-prod/ml-cpu-only": 0, "ml-prod/" + h: 12, "ml-prod/" + tf: 0},
			problems: []string{"spec.teams[*].guaranteed: 48 " + h100 + " GPUs guaranteed in all, but the workers have 24: lower the guarantees (each is scaled down to fit meanwhile)"},
		},
		"a model no worker has": {
			fq:       fleetQueue(team("research", "1", queuev1alpha1.GuaranteedGPUs{Model: "NVIDIA-B200", GPUs: 8})),
			want:     map[string]int64{"cohort/ml-cpu-only": 0, "cohort/" + h: 24, "cohort/" + tf: 4, "ml-research/ml-cpu-only": 0, "ml-research/" + h: 0, "ml-research/" + tf: 0},
			problems: []string{"spec.teams[0].guaranteed[0].model: no worker of AdmissionCheck mk has NVIDIA-B200 GPUs (they have [" + h100 + " " + t4 + "]): name one of those models, or remove the guarantee"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d, err := Compute(tc.fq, fleet)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, gpuQuotas(d)); diff != "" {
				t.Errorf("GPU quotas (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.problems, d.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			for _, cq := range d.ClusterQueues {
				if string(cq.Spec.CohortName) != "ml" || cq.Labels[FleetQueueLabel] != "ml" || cq.Spec.AdmissionChecksStrategy.AdmissionChecks[0].Name != "mk" {
					t.Errorf("ClusterQueue %s: cohort %q, labels %v, checks %+v", cq.Name, cq.Spec.CohortName, cq.Labels, cq.Spec.AdmissionChecksStrategy)
				}
			}
		})
	}
}

func TestValidate(t *testing.T) {
	zero := team("a", "0")
	same := team("b", "1")
	same.Namespace = "a"
	cases := map[string]struct {
		fq   *queuev1alpha1.FleetQueue
		want []string // parts of the error; none when valid
	}{
		"valid":                {fq: fleetQueue(team("a", "2"), team("b", "0.5"))},
		"weight 0":             {fq: fleetQueue(zero), want: []string{"spec.teams[0].weight is 0", "must be above 0"}},
		"negative weight":      {fq: fleetQueue(team("a", "-1")), want: []string{"spec.teams[0].weight is -1"}},
		"two teams, one queue": {fq: fleetQueue(team("a", "1"), same), want: []string{"spec.teams[0] and spec.teams[1] both submit to LocalQueue a/user-queue", "spec.teams[1].localQueue"}},
		"two teams, one name":  {fq: fleetQueue(team("a", "1"), team("a", "1")), want: []string{`spec.teams[1].name "a" is also spec.teams[0]'s`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := Validate(tc.fq)
			if len(tc.want) == 0 {
				if err != nil {
					t.Errorf("Validate: %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate: nil, want an error with %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate: %v\nwant it to contain %q", err, w)
				}
			}
			if _, err := Compute(tc.fq, Fleet{}); err == nil {
				t.Error("Compute wrote a spec Validate refuses")
			}
		})
	}
}

func TestReclaim(t *testing.T) {
	fleet := Count([]Worker{worker("east", map[string]int64{h100: 16})})
	for reclaimSpec, want := range map[string]kueuev1beta2.PreemptionPolicy{
		"":              kueuev1beta2.PreemptionPolicyAny, // the default, as the CRD's
		"LowerPriority": kueuev1beta2.PreemptionPolicyLowerPriority,
		"Never":         kueuev1beta2.PreemptionPolicyNever,
	} {
		fq := fleetQueue(team("a", "1"), team("b", "1"))
		fq.Spec.Reclaim = reclaimSpec
		d, err := Compute(fq, fleet)
		if err != nil {
			t.Fatal(err)
		}
		for _, cq := range d.ClusterQueues {
			if got := cq.Spec.Preemption.ReclaimWithinCohort; got != want {
				t.Errorf("spec.reclaim %q: ClusterQueue %s reclaimWithinCohort %q, want %q", reclaimSpec, cq.Name, got, want)
			}
		}
	}
}
