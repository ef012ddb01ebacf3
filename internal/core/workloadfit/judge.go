package workloadfit

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/gpufit"
)

// State is what the figures say of a workload on one worker.
type State string

const (
	// Fits: every gang of the workload fits the worker's free capacity now.
	Fits State = "Fits"
	// NoFit: some gang does not fit; the worker is not offered the workload.
	NoFit State = "NoFit"
	// Unknown: the worker has no usable figures; it is offered the workload after the workers
	// that fit, and Kueue on the worker decides.
	Unknown State = "Unknown"
)

// Verdict is the dispatcher's view of one worker for one workload.
type Verdict struct {
	Cluster string `json:"cluster"`
	State   State  `json:"state"`
	// Message gives the numbers: per gang what it needs and what the worker's nodes have free.
	Message string `json:"message"`
}

// Judge checks the workload's gangs against the worker's ResourceUsage (nil when it has none) at
// now. A workload without gangs fits every worker.
func Judge(cluster string, u *usagev1alpha1.ResourceUsage, gangs []gpufit.Gang, now time.Time) Verdict {
	return JudgeAfter(cluster, u, nil, "", gangs, now)
}

// JudgeAfter is Judge on what is left of the worker's figures once the gangs claims holds for it
// (offered since the figures were observed, other than the workload uid's own) are placed.
func JudgeAfter(cluster string, u *usagev1alpha1.ResourceUsage, claims *Claims, uid types.UID, gangs []gpufit.Gang, now time.Time) Verdict {
	if len(gangs) == 0 {
		return Verdict{Cluster: cluster, State: Fits, Message: "asks for no extended resources"}
	}
	st, why := gpufit.Usable(u, cluster, now)
	if st == nil {
		return Verdict{Cluster: cluster, State: Unknown, Message: why}
	}
	claimed := claims.Of(cluster, uid, st.ObservedTime.Time)
	var fit, misfit []string
	for _, g := range gangs {
		v := gpufit.FitGangAfter(st, claimed, g)
		if v.Fits {
			fit = append(fit, v.Message)
		} else {
			misfit = append(misfit, v.Message)
		}
	}
	if len(misfit) > 0 {
		return Verdict{Cluster: cluster, State: NoFit, Message: strings.Join(misfit, "; ")}
	}
	return Verdict{Cluster: cluster, State: Fits, Message: strings.Join(fit, "; ")}
}

// Order is the workers to offer the workload to, from verdicts in rank order (best first): those
// that fit, then those without figures. Workers where it does not fit are left out.
func Order(verdicts []Verdict) []string {
	var out, unknown []string
	for _, v := range verdicts {
		switch v.State {
		case Fits:
			out = append(out, v.Cluster)
		case Unknown:
			unknown = append(unknown, v.Cluster)
		}
	}
	return append(out, unknown...)
}

// Summary says in one line why no worker was offered the workload: each worker's verdict.
func Summary(verdicts []Verdict) string {
	parts := make([]string, 0, len(verdicts))
	for _, v := range verdicts {
		parts = append(parts, v.Cluster+": "+v.Message)
	}
	return strings.Join(parts, "; ")
}
