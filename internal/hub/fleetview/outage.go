package fleetview

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/contract/fencing"
)

// Stages of a cluster's timeline, oldest first when they all happen.
const (
	StageHeartbeat = "heartbeat" // the agent's last lease renewal (before the loss, when there was one)
	StageFence     = "fence"     // the agent stops its fenced workloads, by its Timing
	StageTainted   = "tainted"   // the hub tainted it: placements choose it no more
	StageLost      = "lost"      // the hub declared it lost and raised its epoch
	StageMoved     = "moved"     // a workload requeued by the loss runs on another worker
	StageReported  = "reported"  // the agent, back, reported what its fence did
	StageAvailable = "available" // the Available condition's last change
)

// TimelineEvent is one stage of a cluster's timeline, from the objects' own timestamps.
type TimelineEvent struct {
	Time  time.Time `json:"time"`
	Stage string    `json:"stage"`
	Text  string    `json:"text"`
	// Workload and Cluster name, for StageMoved, the workload and where it runs now.
	Workload string `json:"workload,omitempty"`
	Cluster  string `json:"cluster,omitempty"`
}

// Timeline is what the hub and the agent recorded of a cluster's last loss (or, without one, its
// heartbeat and availability), oldest first, with notes on what has no time yet.
type Timeline struct {
	Cluster string          `json:"cluster"`
	Epoch   int64           `json:"epoch"`
	Events  []TimelineEvent `json:"events"`
	Notes   []string        `json:"notes,omitempty"`
}

// ClusterTimeline builds mc's timeline from its lease (nil when unreadable), its annotations and
// conditions, and the hub's Kueue Workloads the last loss requeued (requeued, by "ns/name"; those
// missing were deleted or cannot be read).
func ClusterTimeline(mc *clusterv1.ManagedCluster, lease *coordinationv1.Lease, requeued map[string]*kueuev1beta2.Workload) Timeline {
	out := Timeline{Cluster: mc.Name, Epoch: fencing.Epoch(mc.Annotations), Events: []TimelineEvent{}}
	add := func(at time.Time, stage, text string) {
		out.Events = append(out.Events, TimelineEvent{Time: at.UTC(), Stage: stage, Text: text})
	}
	timing, fenced, _ := fencing.OfCluster(mc.Annotations)
	lostAt, lost := fencing.LostAt(mc.Annotations)
	var renewed *time.Time
	if lease != nil && lease.Spec.RenewTime != nil {
		renewed = &lease.Spec.RenewTime.Time
	}
	switch {
	case lost && renewed != nil && renewed.Before(lostAt):
		add(*renewed, StageHeartbeat, "last heartbeat (lease renewed)")
	case lost && fenced:
		// Renewed since: the heartbeat before the loss was LostAfter before the declaration.
		at := lostAt.Add(-timing.LostAfter)
		add(at, StageHeartbeat, fmt.Sprintf("last heartbeat before the loss (the lease was %s old when the hub declared it lost)", timing.LostAfter))
		renewed = &at
	case renewed != nil:
		add(*renewed, StageHeartbeat, "last heartbeat (lease renewed)")
	}
	if lost && fenced && renewed != nil {
		add(renewed.Add(timing.FenceAfter), StageFence, fmt.Sprintf("the agent stops its fenced workloads, %s after its last renewal (its Timing; by its own clock)", timing.FenceAfter))
	}
	for _, tn := range mc.Spec.Taints {
		if tn.TimeAdded != nil && (tn.Key == clusterv1.ManagedClusterTaintUnreachable || tn.Key == clusterv1.ManagedClusterTaintUnavailable) {
			add(tn.TimeAdded.Time, StageTainted, "tainted "+tn.Key+": placements choose it no more")
		}
	}
	if lost {
		add(lostAt, StageLost, fmt.Sprintf("declared lost by the hub (epoch raised to %d): fenced workloads may start elsewhere", out.Epoch))
		out.Events, out.Notes = moved(out.Events, mc, requeued)
	}
	if c := meta.FindStatusCondition(mc.Status.Conditions, fencing.ConditionWorkloadsFenced); c != nil {
		add(c.LastTransitionTime.Time, StageReported, "the agent's fence reported: "+strings.TrimSpace(c.Message))
	}
	if c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); c != nil {
		add(c.LastTransitionTime.Time, StageAvailable, fmt.Sprintf("Available=%s (%s)", c.Status, c.Reason))
	}
	sort.SliceStable(out.Events, func(i, j int) bool { return out.Events[i].Time.Before(out.Events[j].Time) })
	return out
}

// moved adds, for each workload the loss requeued, when it was admitted on another worker, and
// notes those that are not (yet).
func moved(events []TimelineEvent, mc *clusterv1.ManagedCluster, requeued map[string]*kueuev1beta2.Workload) ([]TimelineEvent, []string) {
	rec, ok, err := fencing.RequeuedOf(mc.Annotations)
	switch {
	case err != nil:
		return events, []string{"the record of requeued workloads does not read: " + err.Error()}
	case !ok || rec.Epoch != fencing.Epoch(mc.Annotations):
		return events, nil
	}
	var waiting, gone int
	for _, name := range rec.Workloads {
		wl := requeued[name]
		if wl == nil {
			gone++
			continue
		}
		if wl.Status.ClusterName == nil || *wl.Status.ClusterName == mc.Name {
			waiting++
			continue
		}
		on := *wl.Status.ClusterName
		// Admitted there; or, once it finished there (Kueue then releases the admission), when it
		// finished.
		if c := meta.FindStatusCondition(wl.Status.Conditions, kueuev1beta2.WorkloadAdmitted); c != nil && c.Status == metav1.ConditionTrue {
			events = append(events, TimelineEvent{Time: c.LastTransitionTime.UTC(), Stage: StageMoved, Workload: name, Cluster: on, Text: fmt.Sprintf("%s admitted on %s", name, on)})
		} else if c := meta.FindStatusCondition(wl.Status.Conditions, kueuev1beta2.WorkloadFinished); c != nil && c.Status == metav1.ConditionTrue {
			events = append(events, TimelineEvent{Time: c.LastTransitionTime.UTC(), Stage: StageMoved, Workload: name, Cluster: on, Text: fmt.Sprintf("%s ran on %s and finished", name, on)})
		} else {
			waiting++
		}
	}
	var notes []string
	if waiting > 0 {
		notes = append(notes, fmt.Sprintf("%d requeued workloads are not running elsewhere yet", waiting))
	}
	if gone > 0 {
		notes = append(notes, fmt.Sprintf("%d requeued workloads are gone from the hub, or you may not read them", gone))
	}
	if rec.More > 0 {
		notes = append(notes, fmt.Sprintf("%d more were requeued than the record names", rec.More))
	}
	return events, notes
}

// RequeuedWorkloads reads, as c's identity, the hub's Kueue Workloads that mc's last loss requeued
// (its fencing.AnnotationRequeued of the current epoch), by "namespace/name": ClusterTimeline's
// input. Those c cannot read (deleted, refused, Kueue not served) are left out.
func RequeuedWorkloads(ctx context.Context, c client.Reader, mc *clusterv1.ManagedCluster) map[string]*kueuev1beta2.Workload {
	out := map[string]*kueuev1beta2.Workload{}
	rec, ok, err := fencing.RequeuedOf(mc.Annotations)
	if err != nil || !ok || rec.Epoch != fencing.Epoch(mc.Annotations) {
		return out
	}
	for _, key := range rec.Workloads {
		ns, name, _ := strings.Cut(key, "/")
		wl := &kueuev1beta2.Workload{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, wl); err == nil {
			out[key] = wl
		}
	}
	return out
}
