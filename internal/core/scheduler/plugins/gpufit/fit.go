package gpufit

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
)

// timeFormat is how explanations write times.
const timeFormat = "2006-01-02T15:04:05Z"

// Lookup returns the cluster's figures when they may be used now, else nil and why not (no
// ResourceUsage, none written yet, or expired) with the fix.
func Lookup(h framework.Handle, cluster string) (*usagev1alpha1.ResourceUsageStatus, string) {
	return Usable(h.ResourceUsage(cluster), cluster, h.Now())
}

// Usable returns u's figures when they may be used at now, else nil and why not.
func Usable(u *usagev1alpha1.ResourceUsage, cluster string, now time.Time) (*usagev1alpha1.ResourceUsageStatus, string) {
	enable := fmt.Sprintf("enable the resource-usage add-on: `flotilla addon enable resource-usage --clusters %s`", cluster)
	switch {
	case u == nil:
		return nil, fmt.Sprintf("no ResourceUsage %s/%s: %s", cluster, usagev1alpha1.ResourceUsageName, enable)
	case u.Status.ObservedTime == nil:
		return nil, fmt.Sprintf("ResourceUsage %s/%s has no figures yet (status.observedTime is unset): %s, and check that it is available",
			cluster, usagev1alpha1.ResourceUsageName, enable)
	case !u.Status.Valid(now):
		return nil, fmt.Sprintf("ResourceUsage %s/%s expired at %s (status.validUntil): its agent stopped refreshing it; check the resource-usage add-on of %s",
			cluster, usagev1alpha1.ResourceUsageName, u.Status.ValidUntil.UTC().Format(timeFormat), cluster)
	}
	return &u.Status, ""
}

// Has reports whether the figures count any node of the requirement's resource and model.
func Has(st *usagev1alpha1.ResourceUsageStatus, res, model string) bool {
	f := st.Figures(res, model)
	return f != nil && (!f.Capacity.IsZero() || !f.Allocatable.IsZero())
}

// Free is the amount of the resource free over the nodes of the model ("" for any), zero when
// the cluster has none.
func Free(st *usagev1alpha1.ResourceUsageStatus, res, model string) resource.Quantity {
	if f := st.Figures(res, model); f != nil {
		return f.Free
	}
	return resource.Quantity{}
}

// NodesWithAtLeast is how many nodes of the model have at least amount of the resource free.
func NodesWithAtLeast(st *usagev1alpha1.ResourceUsageStatus, res, model string, amount resource.Quantity) int32 {
	if f := st.Figures(res, model); f != nil {
		return f.NodesWithAtLeast(amount)
	}
	return 0
}

// Models returns the models of the resource the figures count, sorted.
func Models(st *usagev1alpha1.ResourceUsageStatus, res string) []string {
	var out []string
	for _, f := range st.Resources {
		if f.Name == res && f.Model != "" && (!f.Capacity.IsZero() || !f.Allocatable.IsZero()) {
			out = append(out, f.Model)
		}
	}
	sort.Strings(out)
	return out
}

// Verdict is what Fit found.
type Verdict struct {
	// Fits is true when the cluster meets the requirement.
	Fits bool
	// NoModel is true when the cluster has no node of the resource and model.
	NoModel bool
	// Message gives the figures: why the cluster does not fit, or what it has when it does.
	Message string
}

// Fit checks a cluster's figures against the requirement: it has nodes of the model, at least
// Total free in all, and at least Nodes nodes with PerNode free each. The filter and the CEL
// function gpuFit both decide with it.
func Fit(st *usagev1alpha1.ResourceUsageStatus, req Requirement) Verdict {
	what := req.What()
	f := st.Figures(req.Resource, req.Model)
	if f == nil || (f.Capacity.IsZero() && f.Allocatable.IsZero()) {
		return noModel(st, req)
	}
	free := f.Free
	if !req.Total.IsZero() && free.Cmp(req.Total) < 0 {
		return Verdict{Message: fmt.Sprintf("needs %s free %s in total: %s free", req.Total.String(), what, free.String())}
	}
	if req.Gang() {
		n := f.NodesWithAtLeast(req.PerNode)
		most := f.MostFreeOnANode()
		if n < req.Nodes {
			have := "no node has"
			switch {
			case n == 1:
				have = "only 1 node has"
			case n > 1:
				have = fmt.Sprintf("only %d nodes have", n)
			}
			return Verdict{Message: fmt.Sprintf("needs %s with at least %s free %s: %s free in total, but %s at least %s free (most on one node: %s)",
				plural(req.Nodes, "node"), req.PerNode.String(), what, free.String(), have, req.PerNode.String(), most.String())}
		}
		return Verdict{Fits: true, Message: fmt.Sprintf("%s: %s with at least %s free (needs %d), %s free in total, most on one node %s",
			what, plural(n, "node"), req.PerNode.String(), req.Nodes, free.String(), most.String())}
	}
	return Verdict{Fits: true, Message: fmt.Sprintf("%s: %s free in total (needs %s)", what, free.String(), req.Total.String())}
}

// noModel is the verdict on a cluster without nodes of the requirement's resource and model; it
// names the models the cluster has.
func noModel(st *usagev1alpha1.ResourceUsageStatus, req Requirement) Verdict {
	msg := "has no nodes with " + req.What()
	if req.Model != "" {
		msg += " (" + req.Resource + ")"
		if models := Models(st, req.Resource); len(models) > 0 {
			msg += "; it has " + strings.Join(models, ", ")
		}
	}
	return Verdict{NoModel: true, Message: msg}
}

func plural[N int32 | int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
