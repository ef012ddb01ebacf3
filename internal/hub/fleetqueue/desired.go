package fleetqueue

import (
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	queuev1alpha1 "github.com/flotilla/flotilla/api/queue/v1alpha1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/contract/gpuflavor"
)

const (
	// FleetQueueLabel marks what the hub writes for a FleetQueue; its value is the FleetQueue.
	FleetQueueLabel = "queue.flotilla.io/fleetqueue"
	// DefaultLocalQueue is a team's LocalQueue name when its spec gives none (OCM's examples').
	DefaultLocalQueue = "user-queue"
	gpu               = corev1.ResourceName(usagev1alpha1.ResourceNvidiaGPU)
)

// covered are the resources of the one resource group, in the order every flavor lists them.
var covered = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, gpu}

// Worker is one MultiKueue worker's usable figures.
type Worker struct {
	Name   string
	Status *usagev1alpha1.ResourceUsageStatus
}

// Fleet is what the workers hold: per model its GPUs and workers, and cpu and memory in all.
type Fleet struct {
	Workers     int32
	Models      []queuev1alpha1.ModelQuota // by model; Flavor set
	CPU, Memory resource.Quantity
}

// Count adds up the workers' allocatable amounts.
func Count(workers []Worker) Fleet {
	var f Fleet
	byModel := map[string]*queuev1alpha1.ModelQuota{}
	for _, w := range workers {
		f.Workers++
		if c := w.Status.Figures(string(corev1.ResourceCPU), ""); c != nil {
			f.CPU.Add(c.Allocatable)
		}
		if m := w.Status.Figures(string(corev1.ResourceMemory), ""); m != nil {
			f.Memory.Add(m.Allocatable)
		}
		for _, r := range w.Status.Resources {
			if r.Name != usagev1alpha1.ResourceNvidiaGPU || r.Model == "" || r.Allocatable.IsZero() {
				continue
			}
			mq := byModel[r.Model]
			if mq == nil {
				mq = &queuev1alpha1.ModelQuota{Model: r.Model}
				byModel[r.Model] = mq
			}
			mq.GPUs += r.Allocatable.Value()
			mq.Workers = append(mq.Workers, w.Name)
		}
	}
	models := make([]string, 0, len(byModel))
	for m := range byModel {
		models = append(models, m)
	}
	sort.Strings(models)
	names := gpuflavor.Names(models)
	for _, m := range models {
		mq := byModel[m]
		mq.Flavor = names[m]
		sort.Strings(mq.Workers)
		f.Models = append(f.Models, *mq)
	}
	return f
}

// Desired is what the hub keeps for one FleetQueue.
type Desired struct {
	Flavors       []kueuev1beta2.ResourceFlavor
	Cohort        kueuev1beta2.Cohort
	ClusterQueues []kueuev1beta2.ClusterQueue
	LocalQueues   []kueuev1beta2.LocalQueue
	// Problems are the guarantees that could not be met (the spec's field and the fix); the
	// objects are written anyway, with the guarantees scaled down.
	Problems []string
}

// Compute is the objects of fq over fleet. It returns an error, and nothing, for a spec that
// cannot be written at all (Validate).
func Compute(fq *queuev1alpha1.FleetQueue, fleet Fleet) (Desired, error) {
	if err := Validate(fq); err != nil {
		return Desired{}, err
	}
	var d Desired
	granted, problems := grants(fq, fleet)
	d.Problems = problems
	cpuOnly := FlavorName(fq.Name, gpuflavor.CPUOnly)
	d.Flavors = append(d.Flavors, flavor(fq, cpuOnly, nil))
	for _, m := range fleet.Models {
		d.Flavors = append(d.Flavors, flavor(fq, FlavorName(fq.Name, m.Flavor), map[string]string{usagev1alpha1.LabelNvidiaGPUProduct: m.Model}))
	}
	// The cohort's pool: every flavor's cpu and memory; each model's GPUs less the guarantees.
	pool := []kueuev1beta2.FlavorQuotas{quotas(cpuOnly, fleet.CPU, fleet.Memory, 0)}
	for _, m := range fleet.Models {
		var g int64
		for _, t := range granted {
			g += t[m.Model]
		}
		pool = append(pool, quotas(FlavorName(fq.Name, m.Flavor), fleet.CPU, fleet.Memory, m.GPUs-g))
	}
	d.Cohort = kueuev1beta2.Cohort{
		ObjectMeta: objectMeta(fq, fq.Name, ""),
		Spec:       kueuev1beta2.CohortSpec{ResourceGroups: []kueuev1beta2.ResourceGroup{{CoveredResources: slices.Clone(covered), Flavors: pool}}},
	}
	for i, t := range fq.Spec.Teams {
		team := []kueuev1beta2.FlavorQuotas{quotas(cpuOnly, resource.Quantity{}, resource.Quantity{}, 0)}
		for _, m := range fleet.Models {
			team = append(team, quotas(FlavorName(fq.Name, m.Flavor), resource.Quantity{}, resource.Quantity{}, granted[i][m.Model]))
		}
		weight := t.Weight.DeepCopy()
		d.ClusterQueues = append(d.ClusterQueues, kueuev1beta2.ClusterQueue{
			ObjectMeta: objectMeta(fq, ClusterQueueName(fq.Name, t.Name), ""),
			Spec: kueuev1beta2.ClusterQueueSpec{
				CohortName:        kueuev1beta2.CohortReference(fq.Name),
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: t.Namespace}},
				ResourceGroups:    []kueuev1beta2.ResourceGroup{{CoveredResources: slices.Clone(covered), Flavors: team}},
				FairSharing:       &kueuev1beta2.FairSharing{Weight: &weight},
				Preemption: &kueuev1beta2.ClusterQueuePreemption{
					ReclaimWithinCohort: reclaim(fq),
					WithinClusterQueue:  kueuev1beta2.PreemptionPolicyLowerPriority,
				},
				AdmissionChecksStrategy: &kueuev1beta2.AdmissionChecksStrategy{AdmissionChecks: []kueuev1beta2.AdmissionCheckStrategyRule{
					{Name: kueuev1beta2.AdmissionCheckReference(fq.Spec.AdmissionCheck)}}},
			},
		})
		d.LocalQueues = append(d.LocalQueues, kueuev1beta2.LocalQueue{
			ObjectMeta: objectMeta(fq, LocalQueueName(t), t.Namespace),
			Spec:       kueuev1beta2.LocalQueueSpec{ClusterQueue: kueuev1beta2.ClusterQueueReference(ClusterQueueName(fq.Name, t.Name))},
		})
	}
	return d, nil
}

// grants are the GPUs each team is given per model: its guarantees, scaled down (rounding
// down) where the teams together are guaranteed more than the workers have, and none of a model
// no worker has. problems say which guarantees were not met and how to fix them.
func grants(fq *queuev1alpha1.FleetQueue, fleet Fleet) ([]map[string]int64, []string) {
	have := map[string]int64{}
	var models []string
	for _, m := range fleet.Models {
		have[m.Model] = m.GPUs
		models = append(models, m.Model)
	}
	asked := map[string]int64{}
	var problems []string
	for i, t := range fq.Spec.Teams {
		for j, g := range t.Guaranteed {
			if _, ok := have[g.Model]; !ok {
				problems = append(problems, fmt.Sprintf("spec.teams[%d].guaranteed[%d].model: no worker of AdmissionCheck %s has %s GPUs (they have %v): name one of those models, or remove the guarantee",
					i, j, fq.Spec.AdmissionCheck, g.Model, models))
				continue
			}
			asked[g.Model] += g.GPUs
		}
	}
	for _, m := range models {
		if asked[m] > have[m] {
			problems = append(problems, fmt.Sprintf("spec.teams[*].guaranteed: %d %s GPUs guaranteed in all, but the workers have %d: lower the guarantees (each is scaled down to fit meanwhile)",
				asked[m], m, have[m]))
		}
	}
	out := make([]map[string]int64, len(fq.Spec.Teams))
	for i, t := range fq.Spec.Teams {
		out[i] = map[string]int64{}
		for _, g := range t.Guaranteed {
			n, ok := have[g.Model]
			if !ok {
				continue
			}
			if asked[g.Model] > n {
				out[i][g.Model] = g.GPUs * n / asked[g.Model]
			} else {
				out[i][g.Model] = g.GPUs
			}
		}
	}
	return out, problems
}

// FlavorName is the hub's ResourceFlavor of a FleetQueue for a worker flavor (gpuflavor): each
// FleetQueue has its own, so that none shares an object with another.
func FlavorName(fleetQueue, flavor string) string { return fleetQueue + "-" + flavor }

// ClusterQueueName is a team's ClusterQueue.
func ClusterQueueName(fleetQueue, team string) string { return fleetQueue + "-" + team }

// LocalQueueName is a team's LocalQueue in its namespace.
func LocalQueueName(t queuev1alpha1.Team) string {
	if t.LocalQueue != "" {
		return t.LocalQueue
	}
	return DefaultLocalQueue
}

func objectMeta(fq *queuev1alpha1.FleetQueue, name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{FleetQueueLabel: fq.Name}}
}

func flavor(fq *queuev1alpha1.FleetQueue, name string, labels map[string]string) kueuev1beta2.ResourceFlavor {
	return kueuev1beta2.ResourceFlavor{ObjectMeta: objectMeta(fq, name, ""), Spec: kueuev1beta2.ResourceFlavorSpec{NodeLabels: labels}}
}

func quotas(flavor string, cpu, memory resource.Quantity, gpus int64) kueuev1beta2.FlavorQuotas {
	return kueuev1beta2.FlavorQuotas{Name: kueuev1beta2.ResourceFlavorReference(flavor), Resources: []kueuev1beta2.ResourceQuota{
		{Name: corev1.ResourceCPU, NominalQuota: cpu},
		{Name: corev1.ResourceMemory, NominalQuota: memory},
		{Name: gpu, NominalQuota: *resource.NewQuantity(max(gpus, 0), resource.DecimalSI)},
	}}
}

// reclaim is the teams' ClusterQueues' reclaimWithinCohort: spec.reclaim, Any when unset.
func reclaim(fq *queuev1alpha1.FleetQueue) kueuev1beta2.PreemptionPolicy {
	if fq.Spec.Reclaim == "" {
		return kueuev1beta2.PreemptionPolicyAny
	}
	return kueuev1beta2.PreemptionPolicy(fq.Spec.Reclaim)
}
