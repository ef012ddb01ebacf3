package fleetview

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/flotilla/flotilla/internal/core/workloadfit"
	hubkueue "github.com/flotilla/flotilla/internal/hub/kueue"
)

// WorkloadExplanation says why a Kueue Workload on the hub waits, or where it runs: its queue and
// conditions, its place in its ClusterQueue, and what Flotilla's MultiKueue dispatcher makes of
// each worker. It is `flotilla explain workload -o json` and the MCP tool explain_workload.
type WorkloadExplanation struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Phase is one word for Summary: Finished, Evicted, Inactive, Running, QueuedForQuota,
	// NoWorkerFits, NoActiveWorker, Dispatching, Rejected, WaitingForChecks, Admitted or Unknown.
	Phase   string `json:"phase" jsonschema:"one word for the summary (QueuedForQuota, NoWorkerFits, Dispatching, Running, Finished, ...)"`
	Summary string `json:"summary" jsonschema:"one line: why the workload waits, or where it runs"`

	LocalQueue   string `json:"localQueue"`
	ClusterQueue string `json:"clusterQueue,omitempty" jsonschema:"the ClusterQueue it holds quota in, else the one its LocalQueue points to"`
	// LocalQueueMissing is set when its LocalQueue does not exist on the hub.
	LocalQueueMissing bool   `json:"localQueueMissing,omitempty"`
	Priority          int32  `json:"priority"`
	PriorityClass     string `json:"priorityClass,omitempty"`
	// Active is spec.active: an inactive workload does not queue.
	Active     bool                `json:"active"`
	Conditions []WorkloadCondition `json:"conditions"`
	// Queue is its place among its ClusterQueue's pending workloads; nil when it is not pending.
	Queue *QueuePosition `json:"queue,omitempty"`
	// FairShare is its ClusterQueue's place in its cohort under fair sharing; nil without a cohort.
	FairShare       *FairShare       `json:"fairShare,omitempty"`
	AdmissionChecks []AdmissionCheck `json:"admissionChecks"`
	// MultiKueue is its MultiKueue admission check (or its ClusterQueue's) with the config's
	// workers; nil when it has none.
	MultiKueue            *MultiKueueExplanation `json:"multiKueue,omitempty"`
	ClusterName           string                 `json:"clusterName,omitempty" jsonschema:"the worker cluster it runs on (status.clusterName)"`
	NominatedClusterNames []string               `json:"nominatedClusterNames"`
}

// WorkloadCondition is one of a Workload's conditions.
type WorkloadCondition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
}

// QueuePosition is a pending workload's place in its ClusterQueue (QueueOrderComputed).
type QueuePosition struct {
	// Position counts from 1, the head of the queue.
	Position int `json:"position"`
	// Ahead are how many pending workloads come before it; Pending how many there are in all.
	Ahead   int `json:"ahead"`
	Pending int `json:"pending"`
	// QueueOrderTime is the time it is ordered by (RFC 3339).
	QueueOrderTime string `json:"queueOrderTime"`
	// RequeueAt is when Kueue's backoff lets it try again, when it is backing off.
	RequeueAt string `json:"requeueAt,omitempty"`
	// First are up to MaxAhead of the workloads ahead of it, the head first.
	First []QueuedWorkload `json:"first"`
	// Computed says how the order is computed.
	Computed string `json:"computed"`
	// Scope says which namespaces were counted: "all namespaces", or only the workload's when the
	// viewer may not list Workloads in all.
	Scope string `json:"scope"`
}

// MaxAhead is how many workloads ahead QueuePosition.First names.
const MaxAhead = 5

// QueuedWorkload is a workload ahead in the queue.
type QueuedWorkload struct {
	Namespace      string `json:"namespace"`
	Name           string `json:"name"`
	Priority       int32  `json:"priority"`
	QueueOrderTime string `json:"queueOrderTime"`
}

// MultiKueueExplanation is a workload's MultiKueue admission check and the workers of its
// MultiKueueConfig.
type MultiKueueExplanation struct {
	AdmissionCheck string `json:"admissionCheck"`
	// State is the check's state on the workload (Pending, Ready, Retry, Rejected), "" when the
	// workload does not have it yet (it holds no quota).
	State   string `json:"state,omitempty"`
	Message string `json:"message,omitempty"`
	Config  string `json:"config,omitempty" jsonschema:"the MultiKueueConfig, whose order of clusters is the placement's ranking"`
	// Workers are the config's clusters in its order, best first.
	Workers []WorkerVerdict `json:"workers"`
	// OfferOrder is the order the dispatcher offers the workload in: active workers where it
	// fits, then those without figures (workloadfit.Order).
	OfferOrder []string `json:"offerOrder"`
}

// WorkerVerdict is one worker of the config and the dispatcher's verdict on the workload there.
type WorkerVerdict struct {
	Rank    int    `json:"rank"`
	Cluster string `json:"cluster"`
	Active  bool   `json:"active"`
	// ActiveMessage says why the MultiKueueCluster is not active.
	ActiveMessage string `json:"activeMessage,omitempty"`
	// Fit and Message are workloadfit.Judge's verdict, with the numbers.
	Fit       workloadfit.State `json:"fit"`
	Message   string            `json:"message"`
	Nominated bool              `json:"nominated" jsonschema:"whether the workload is offered to it (status.nominatedClusterNames)"`
	RunsHere  bool              `json:"runsHere" jsonschema:"whether the workload runs on it (status.clusterName)"`
}

// ExplainWorkload reads Workload ns/name and what decides its fate from the hub with c (with the
// viewer's identity: what it holds is what the viewer may read) and explains it at now. A missing
// workload is an error apierrors.IsNotFound recognizes, a hub without Kueue's CRDs one
// meta.IsNoMatchError does.
func ExplainWorkload(ctx context.Context, c client.Reader, ns, name string, now time.Time) (*WorkloadExplanation, error) {
	wl := &kueuev1beta2.Workload{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, wl); err != nil {
		return nil, fmt.Errorf("reading Workload %s/%s: %w", ns, name, err)
	}
	e := describeWorkload(wl)
	lq := &kueuev1beta2.LocalQueue{}
	switch err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: string(wl.Spec.QueueName)}, lq); {
	case apierrors.IsNotFound(err):
		e.LocalQueueMissing = true
	case err != nil:
		return nil, fmt.Errorf("reading LocalQueue %s/%s: %w", ns, wl.Spec.QueueName, err)
	case e.ClusterQueue == "":
		e.ClusterQueue = string(lq.Spec.ClusterQueue)
	}
	if PendingInQueue(wl) && e.ClusterQueue != "" {
		q, err := queuePosition(ctx, c, wl, e.ClusterQueue)
		if err != nil {
			return nil, err
		}
		e.Queue = q
	}
	if e.ClusterQueue != "" {
		fs, err := fairShare(ctx, c, e.ClusterQueue)
		if err != nil {
			return nil, err
		}
		e.FairShare = fs
	}
	mk, err := multiKueue(ctx, c, wl, e.ClusterQueue, now)
	if err != nil {
		return nil, err
	}
	e.MultiKueue = mk
	e.Phase, e.Summary = Summarize(e)
	return e, nil
}

// describeWorkload is what the Workload itself says.
func describeWorkload(wl *kueuev1beta2.Workload) *WorkloadExplanation {
	e := &WorkloadExplanation{
		Namespace: wl.Namespace, Name: wl.Name, LocalQueue: string(wl.Spec.QueueName),
		Priority: Priority(wl), Active: wl.Spec.Active == nil || *wl.Spec.Active,
		Conditions: []WorkloadCondition{}, AdmissionChecks: []AdmissionCheck{},
		NominatedClusterNames: append([]string{}, wl.Status.NominatedClusterNames...),
	}
	if r := wl.Spec.PriorityClassRef; r != nil {
		e.PriorityClass = r.Name
	}
	if wl.Status.Admission != nil {
		e.ClusterQueue = string(wl.Status.Admission.ClusterQueue)
	}
	if wl.Status.ClusterName != nil {
		e.ClusterName = *wl.Status.ClusterName
	}
	for _, c := range wl.Status.Conditions {
		e.Conditions = append(e.Conditions, WorkloadCondition{Type: c.Type, Status: string(c.Status), Reason: c.Reason,
			Message: c.Message, LastTransitionTime: rfc3339(c.LastTransitionTime.Time)})
	}
	for _, ac := range wl.Status.AdmissionChecks {
		e.AdmissionChecks = append(e.AdmissionChecks, AdmissionCheck{Name: string(ac.Name), State: string(ac.State), Message: ac.Message})
	}
	return e
}

// queuePosition places wl among the pending workloads of ClusterQueue cq. It lists Workloads and
// LocalQueues in all namespaces, or in wl's alone when the viewer may not list them all.
func queuePosition(ctx context.Context, c client.Reader, wl *kueuev1beta2.Workload, cq string) (*QueuePosition, error) {
	scope := "all namespaces"
	wls, lqs, err := listQueues(ctx, c)
	if apierrors.IsForbidden(err) {
		scope = "namespace " + wl.Namespace + " only: the viewer may not list Workloads and LocalQueues in all namespaces"
		wls, lqs, err = listQueues(ctx, c, client.InNamespace(wl.Namespace))
	}
	if err != nil {
		return nil, err
	}
	localQueues := clusterQueuesOf(lqs)
	// The workload as read first stands for itself, should the list have missed or changed it.
	wls = slices.DeleteFunc(wls, func(w kueuev1beta2.Workload) bool { return w.UID == wl.UID })
	wls = append(wls, *wl)
	localQueues[wl.Namespace+"/"+string(wl.Spec.QueueName)] = cq
	q := Position(wl, PendingOrder(wls, localQueues, cq))
	q.Scope = scope
	return q, nil
}

func listQueues(ctx context.Context, c client.Reader, opts ...client.ListOption) ([]kueuev1beta2.Workload, []kueuev1beta2.LocalQueue, error) {
	wls := &kueuev1beta2.WorkloadList{}
	if err := c.List(ctx, wls, opts...); err != nil {
		return nil, nil, fmt.Errorf("listing Workloads: %w", err)
	}
	lqs := &kueuev1beta2.LocalQueueList{}
	if err := c.List(ctx, lqs, opts...); err != nil {
		return nil, nil, fmt.Errorf("listing LocalQueues: %w", err)
	}
	return wls.Items, lqs.Items, nil
}

// Position is wl's place in order (PendingOrder, which holds it).
func Position(wl *kueuev1beta2.Workload, order []*kueuev1beta2.Workload) *QueuePosition {
	i := slices.IndexFunc(order, func(w *kueuev1beta2.Workload) bool { return w.UID == wl.UID })
	q := &QueuePosition{Position: i + 1, Ahead: i, Pending: len(order), QueueOrderTime: rfc3339(QueueOrderTime(wl)),
		First: firstAhead(order, i), Computed: QueueOrderComputed}
	if rs := wl.Status.RequeueState; rs != nil && rs.RequeueAt != nil {
		q.RequeueAt = rfc3339(rs.RequeueAt.Time)
	}
	return q
}

// firstAhead names up to MaxAhead of the workloads ahead of order[i], the head first.
func firstAhead(order []*kueuev1beta2.Workload, i int) []QueuedWorkload {
	out := []QueuedWorkload{}
	for _, w := range order[:min(max(i, 0), MaxAhead)] {
		out = append(out, QueuedWorkload{Namespace: w.Namespace, Name: w.Name, Priority: Priority(w), QueueOrderTime: rfc3339(QueueOrderTime(w))})
	}
	return out
}

// multiKueue is the workload's MultiKueue admission check, else its ClusterQueue's, with each
// worker's verdict as the dispatcher reads it (internal/hub/kueue); nil when there is none.
func multiKueue(ctx context.Context, c client.Reader, wl *kueuev1beta2.Workload, cq string, now time.Time) (*MultiKueueExplanation, error) {
	checks, err := hubkueue.MultiKueueChecks(ctx, c)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing AdmissionChecks: %w", err)
	}
	mk := &MultiKueueExplanation{Workers: []WorkerVerdict{}, OfferOrder: []string{}}
	if st := hubkueue.MultiKueueCheck(wl, checks); st != nil {
		mk.AdmissionCheck, mk.State, mk.Message = string(st.Name), string(st.State), st.Message
	} else if mk.AdmissionCheck = clusterQueueCheck(ctx, c, cq, checks); mk.AdmissionCheck == "" {
		return nil, nil
	}
	config, workers, err := hubkueue.ConfigWorkers(ctx, c, mk.AdmissionCheck)
	if err != nil {
		return nil, fmt.Errorf("reading the workers of AdmissionCheck %s: %w", mk.AdmissionCheck, err)
	}
	mk.Config = config
	names := make([]string, 0, len(workers))
	for _, w := range workers {
		names = append(names, w.Name)
	}
	verdicts := hubkueue.JudgeWorkers(ctx, c, wl, names, nil, now)
	var active []workloadfit.Verdict
	for i, w := range workers {
		v := verdicts[i]
		mk.Workers = append(mk.Workers, WorkerVerdict{Rank: i + 1, Cluster: w.Name, Active: w.Active, ActiveMessage: w.Message,
			Fit: v.State, Message: v.Message, Nominated: slices.Contains(wl.Status.NominatedClusterNames, w.Name),
			RunsHere: wl.Status.ClusterName != nil && *wl.Status.ClusterName == w.Name})
		if w.Active {
			active = append(active, v)
		}
	}
	mk.OfferOrder = append(mk.OfferOrder, workloadfit.Order(active)...)
	return mk, nil
}

// clusterQueueCheck is the MultiKueue admission check of ClusterQueue cq, or "".
func clusterQueueCheck(ctx context.Context, c client.Reader, cq string, checks map[string]bool) string {
	if cq == "" {
		return ""
	}
	q := &kueuev1beta2.ClusterQueue{}
	if err := c.Get(ctx, client.ObjectKey{Name: cq}, q); err != nil || q.Spec.AdmissionChecksStrategy == nil {
		return ""
	}
	for _, r := range q.Spec.AdmissionChecksStrategy.AdmissionChecks {
		if checks[string(r.Name)] {
			return string(r.Name)
		}
	}
	return ""
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
