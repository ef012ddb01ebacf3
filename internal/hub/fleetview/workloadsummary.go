package fleetview

import (
	"fmt"
	"strings"

	"github.com/flotilla/flotilla/internal/core/workloadfit"
)

// Summarize says in one word (the phase) and one line why the explained workload waits, or where
// it runs, from the rest of the explanation.
func Summarize(e *WorkloadExplanation) (phase, summary string) {
	cond := func(typ string) *WorkloadCondition {
		for i := range e.Conditions {
			if e.Conditions[i].Type == typ {
				return &e.Conditions[i]
			}
		}
		return nil
	}
	isTrue := func(typ string) bool { c := cond(typ); return c != nil && c.Status == "True" }
	switch {
	case isTrue("Finished"):
		return "Finished", "finished" + because(cond("Finished"))
	case !e.Active:
		return "Inactive", "deactivated (spec.active is false): it does not queue until spec.active is true again"
	case isTrue("Evicted"):
		return "Evicted", "evicted" + because(cond("Evicted")) + "; Kueue queues it again once its pods have stopped"
	case e.ClusterName != "":
		return "Running", "running on " + e.ClusterName
	case !isTrue("QuotaReserved"):
		return "QueuedForQuota", queued(e, cond("QuotaReserved"))
	}
	if mk := e.MultiKueue; mk != nil {
		if phase, summary := dispatching(e, mk); phase != "" {
			return phase, summary
		}
	}
	var waiting []string
	for _, ac := range e.AdmissionChecks {
		if ac.State != "Ready" {
			waiting = append(waiting, ac.Name+" ("+ac.State+joinMessage(ac.Message)+")")
		}
	}
	switch {
	case len(waiting) > 0:
		return "WaitingForChecks", fmt.Sprintf("holds quota in ClusterQueue %s; waiting for admission check %s", e.ClusterQueue, strings.Join(waiting, ", "))
	case isTrue("Admitted"):
		return "Admitted", "admitted in ClusterQueue " + e.ClusterQueue
	}
	return "Unknown", "holds quota in ClusterQueue " + e.ClusterQueue + "; waiting for Kueue to admit it" + because(cond("Admitted"))
}

// queued says why a workload without quota waits.
func queued(e *WorkloadExplanation, qr *WorkloadCondition) string {
	if e.LocalQueueMissing {
		return fmt.Sprintf("not queued: LocalQueue %s/%s does not exist on the hub; create it or submit to another (`kubectl get localqueues -n %s`)",
			e.Namespace, e.LocalQueue, e.Namespace)
	}
	if e.ClusterQueue == "" {
		return "not queued: LocalQueue " + e.Namespace + "/" + e.LocalQueue + " names no ClusterQueue" + because(qr)
	}
	s := "waiting for quota in ClusterQueue " + e.ClusterQueue
	if q := e.Queue; q != nil {
		s += fmt.Sprintf(" (position %d of %d pending, %s ahead)", q.Position, q.Pending, plural(q.Ahead, "workload", "workloads"))
	}
	if qr == nil || qr.Message == "" {
		return s + ": Kueue has not tried to admit it yet"
	}
	return s + ": " + qr.Message
}

// dispatching says why a workload holding quota waits for its MultiKueue check; "" when the check
// does not hold it up.
func dispatching(e *WorkloadExplanation, mk *MultiKueueExplanation) (phase, summary string) {
	switch mk.State {
	case "Rejected":
		return "Rejected", "rejected by MultiKueue admission check " + mk.AdmissionCheck + joinMessage(mk.Message)
	case "Retry":
		return "Dispatching", "MultiKueue admission check " + mk.AdmissionCheck + " retries" + joinMessage(mk.Message)
	case "Pending":
	default:
		return "", ""
	}
	var active []workloadfit.Verdict
	for _, w := range mk.Workers {
		if w.Active {
			active = append(active, workloadfit.Verdict{Cluster: w.Cluster, State: w.Fit, Message: w.Message})
		}
	}
	switch {
	case mk.Config == "":
		return "NoActiveWorker", "AdmissionCheck " + mk.AdmissionCheck + " names no MultiKueueConfig on the hub; no worker can take it"
	case len(active) == 0:
		return "NoActiveWorker", fmt.Sprintf("no active worker in MultiKueueConfig %s (%s)", mk.Config, inactive(mk.Workers))
	case len(mk.OfferOrder) == 0:
		return "NoWorkerFits", "no worker fits its pods: " + workloadfit.Summary(active)
	case len(e.NominatedClusterNames) > 0:
		return "Dispatching", fmt.Sprintf("offered to %s; waiting for %s to admit it", strings.Join(e.NominatedClusterNames, ", "),
			plural2(len(e.NominatedClusterNames), "it", "one of them"))
	}
	return "Dispatching", "waiting for the dispatcher to offer it to " + mk.OfferOrder[0]
}

func inactive(ws []WorkerVerdict) string {
	if len(ws) == 0 {
		return "it lists no cluster"
	}
	parts := make([]string, 0, len(ws))
	for _, w := range ws {
		parts = append(parts, w.Cluster+": "+w.ActiveMessage)
	}
	return strings.Join(parts, "; ")
}

// because is ": REASON: MESSAGE" of a condition, "" without one.
func because(c *WorkloadCondition) string {
	if c == nil {
		return ""
	}
	s := ""
	if c.Reason != "" {
		s += ": " + c.Reason
	}
	return s + joinMessage(c.Message)
}

func joinMessage(m string) string {
	if m == "" {
		return ""
	}
	return ": " + m
}
