package fleetview

import (
	"context"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	queuev1alpha1 "github.com/flotilla/flotilla/api/queue/v1alpha1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/queuesim"
	"github.com/flotilla/flotilla/internal/core/workloadfit"
	"github.com/flotilla/flotilla/internal/hub/fleetqueue"
)

// AnyModel is the key, in a team's demand and fair share, of the GPUs of workloads that do not
// ask for a model (no nvidia.com/gpu.product node selector) and hold no quota yet.
const AnyModel = ""

// MaxPendingShown bounds the pending workloads a QueueView lists per team (the head of each
// team's queue); Pending counts them all.
const MaxPendingShown = 50

// QueueView is one FleetQueue as the hub's Kueue holds it now: per team the GPUs of each model
// its ClusterQueue has reserved, its demand (those and its pending workloads'), and its fair
// share of the fleet's GPUs (TeamFairShares), and the head of each team's queue.
type QueueView struct {
	Name           string `json:"name"`
	AdmissionCheck string `json:"admissionCheck"`
	Reclaim        string `json:"reclaim"`
	// Models are the fleet's GPUs per model as the FleetQueue's status last wrote them.
	Models []QueueModel `json:"models"`
	Teams  []TeamView   `json:"teams"`
	// NotReady is the FleetQueue's Ready condition's reason and message when it is not True.
	NotReady string `json:"notReady,omitempty"`
}

// QueueModel is the fleet's GPUs of one model.
type QueueModel struct {
	Model string `json:"model"`
	GPUs  int64  `json:"gpus"`
}

// TeamView is one team of a FleetQueue. Maps are keyed by model, AnyModel for demand no model
// holds yet.
type TeamView struct {
	Name         string           `json:"name"`
	Namespace    string           `json:"namespace"`
	ClusterQueue string           `json:"clusterQueue"`
	Weight       float64          `json:"weight"`
	Guaranteed   map[string]int64 `json:"guaranteed"`
	// Used are the GPUs of each model its ClusterQueue has reserved (status.flavorsReservation).
	Used map[string]int64 `json:"used"`
	// Demand is Used plus the GPUs its pending workloads ask for.
	Demand map[string]int64 `json:"demand"`
	// Fair is its fair share: TeamFairShares of every team's demand.
	Fair map[string]float64 `json:"fair"`
	// Pending counts its pending workloads; Queue is the head of its queue in Kueue's order
	// (PendingOrder), at most MaxPendingShown.
	Pending int               `json:"pending"`
	Queue   []PendingWorkload `json:"queue"`
}

// PendingWorkload is a workload waiting in a team's ClusterQueue.
type PendingWorkload struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Position  int    `json:"position"`
	Priority  int32  `json:"priority"`
	// Pods is its gang: every pod of every pod set, which must all start together.
	Pods int64 `json:"pods"`
	// GPUs are the GPUs all its pods ask for; Model is the model it names (AnyModel for any).
	GPUs   int64     `json:"gpus"`
	Model  string    `json:"model,omitempty"`
	Queued time.Time `json:"queued"`
}

// TeamFairShares is each team's fair GPUs per model, as the hub's Kueue shares a FleetQueue's cohort:
// first each team's guaranteed GPUs of a model (its nominal quota) up to its demand, then the
// rest of the model by weighted max-min fairness of the demand left (queuesim.FairSharesByModel,
// the allocation the queue simulator and `make bench-queue` measure fairness against), the GPUs
// of workloads for any model sharing what the models leave. Fluid: a gang is not indivisible here.
func TeamFairShares(capacity map[string]int64, guaranteed, demand []map[string]int64, weights []float64) []map[string]float64 {
	left := map[string]float64{}
	for m, n := range capacity {
		left[m] = float64(n)
	}
	base := make([]map[string]float64, len(demand))
	rest := make([]map[string]float64, len(demand))
	for t := range demand {
		base[t], rest[t] = map[string]float64{}, map[string]float64{}
		for m, d := range demand[t] {
			g := float64(min(d, guaranteed[t][m]))
			if _, ok := capacity[m]; !ok || m == AnyModel {
				g = 0
			}
			if g > 0 {
				base[t][m] = g
				left[m] -= g
			}
			if d := float64(d) - g; d > 0 {
				rest[t][m] = d
			}
		}
	}
	for m, n := range left {
		left[m] = max(n, 0)
	}
	out := queuesim.FairSharesByModel(left, rest, weights)
	for t := range out {
		for m, g := range base[t] {
			out[t][m] += g
		}
	}
	return out
}

// ViewQueue describes fq from its teams' ClusterQueues and LocalQueues and the hub's Workloads
// (of any queue: those of other queues are skipped).
func ViewQueue(fq *queuev1alpha1.FleetQueue, cqs []kueuev1beta2.ClusterQueue, lqs []kueuev1beta2.LocalQueue, wls []kueuev1beta2.Workload) QueueView {
	v := QueueView{Name: fq.Name, AdmissionCheck: fq.Spec.AdmissionCheck, Reclaim: fq.Spec.Reclaim, Models: []QueueModel{}, Teams: []TeamView{}}
	if v.Reclaim == "" {
		v.Reclaim = "Any"
	}
	if c := meta.FindStatusCondition(fq.Status.Conditions, queuev1alpha1.ConditionReady); c == nil {
		v.NotReady = "the hub has not written this FleetQueue's objects yet"
	} else if c.Status != "True" {
		v.NotReady = c.Reason + ": " + c.Message
	}
	capacity := map[string]int64{}
	modelOf := map[string]string{} // the hub's ResourceFlavor (status.models[].flavor) -> model
	for _, m := range fq.Status.Models {
		v.Models = append(v.Models, QueueModel{Model: m.Model, GPUs: m.GPUs})
		capacity[m.Model] = m.GPUs
		modelOf[m.Flavor] = m.Model
	}
	byName := map[string]*kueuev1beta2.ClusterQueue{}
	for i := range cqs {
		byName[cqs[i].Name] = &cqs[i]
	}
	localQueues := clusterQueuesOf(lqs)
	guaranteed := make([]map[string]int64, len(fq.Spec.Teams))
	demand := make([]map[string]int64, len(fq.Spec.Teams))
	weights := make([]float64, len(fq.Spec.Teams))
	for i, t := range fq.Spec.Teams {
		tv := TeamView{Name: t.Name, Namespace: t.Namespace, ClusterQueue: fleetqueue.ClusterQueueName(fq.Name, t.Name), Weight: 1,
			Guaranteed: map[string]int64{}, Used: map[string]int64{}, Demand: map[string]int64{}, Queue: []PendingWorkload{}}
		if !t.Weight.IsZero() {
			tv.Weight = t.Weight.AsApproximateFloat64()
		}
		for _, g := range t.Guaranteed {
			tv.Guaranteed[g.Model] = g.GPUs
		}
		// Only a ClusterQueue the hub wrote for this FleetQueue counts (fleetqueue's ownership).
		if cq := byName[tv.ClusterQueue]; cq != nil && cq.Labels[fleetqueue.FleetQueueLabel] == fq.Name {
			for _, f := range cq.Status.FlavorsReservation {
				model, ok := modelOf[string(f.Name)]
				if !ok {
					continue
				}
				for _, r := range f.Resources {
					if r.Name == usagev1alpha1.ResourceNvidiaGPU && r.Total.Value() > 0 {
						tv.Used[model] += r.Total.Value()
					}
				}
			}
			order := PendingOrder(wls, localQueues, tv.ClusterQueue)
			tv.Pending = len(order)
			for p, wl := range order {
				pods, gpus, model := gang(wl)
				if p < MaxPendingShown {
					tv.Queue = append(tv.Queue, PendingWorkload{Namespace: wl.Namespace, Name: wl.Name, Position: p + 1, Priority: Priority(wl),
						Pods: pods, GPUs: gpus, Model: model, Queued: QueueOrderTime(wl).UTC()})
				}
				if gpus > 0 {
					tv.Demand[model] += gpus
				}
			}
		}
		for m, n := range tv.Used {
			tv.Demand[m] += n
		}
		guaranteed[i], demand[i], weights[i] = tv.Guaranteed, tv.Demand, tv.Weight
		v.Teams = append(v.Teams, tv)
	}
	for i, fair := range TeamFairShares(capacity, guaranteed, demand, weights) {
		v.Teams[i].Fair = fair
	}
	return v
}

// gang is a workload's pods (every pod of every pod set), the GPUs they ask for, and the model
// they name, as the dispatcher reads them (workloadfit.Gangs: requests as the scheduler counts
// them; the first model named, AnyModel when none).
func gang(wl *kueuev1beta2.Workload) (pods, gpus int64, model string) {
	for _, ps := range wl.Spec.PodSets {
		pods += int64(ps.Count)
	}
	for _, g := range workloadfit.Gangs(wl, nil) {
		if g.Resource != usagev1alpha1.ResourceNvidiaGPU {
			continue
		}
		for _, ps := range g.PodSets {
			gpus += int64(ps.Count) * ps.Per.Value()
		}
		if model == AnyModel {
			model = g.Model
		}
	}
	return pods, gpus, model
}

// ReadQueues lists the FleetQueues and what ViewQueue needs with c and describes each, by name.
func ReadQueues(ctx context.Context, c client.Reader) ([]QueueView, error) {
	var fqs queuev1alpha1.FleetQueueList
	if err := c.List(ctx, &fqs); err != nil {
		return nil, err
	}
	if len(fqs.Items) == 0 {
		return []QueueView{}, nil
	}
	var cqs kueuev1beta2.ClusterQueueList
	if err := c.List(ctx, &cqs, client.HasLabels{fleetqueue.FleetQueueLabel}); err != nil {
		return nil, err
	}
	wls, lqs, err := listQueues(ctx, c)
	if err != nil {
		return nil, err
	}
	out := make([]QueueView, 0, len(fqs.Items))
	for i := range fqs.Items {
		out = append(out, ViewQueue(&fqs.Items[i], cqs.Items, lqs, wls))
	}
	slices.SortFunc(out, func(a, b QueueView) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
