package gpufit

import (
	"fmt"
	"sort"
	"strings"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
)

// Name is the filter's name in the registry and in explanations.
const Name = "GPUFit"

var (
	_ framework.FilterPlugin     = &Filter{}
	_ framework.NoMatchExplainer = &Filter{}
)

// Filter keeps the clusters that meet the placement's GPU requirement.
type Filter struct {
	h   framework.Handle
	req Requirement
}

// New returns the filter of the placement's annotation, or nil when it has none.
func New(h framework.Handle, _ framework.Args) (framework.Plugin, error) {
	req, ok, err := FromPlacement(h.Placement().Annotations)
	if err != nil || !ok {
		return nil, err
	}
	return &Filter{h: h, req: req}, nil
}

// Name implements framework.Plugin.
func (p *Filter) Name() string { return Name }

// Filter implements framework.FilterPlugin. A cluster that fits passes with its figures in the
// explanation, and asks to be scheduled again when they expire.
func (p *Filter) Filter(c *clusterv1.ManagedCluster) *framework.Status {
	st, why := Lookup(p.h, c.Name)
	if st == nil {
		return framework.NewStatus(framework.Unschedulable, why)
	}
	v := Fit(st, p.req)
	if !v.Fits {
		return framework.NewStatus(framework.Unschedulable, v.Message)
	}
	s := framework.NewStatus(framework.Success, v.Message)
	if st.ValidUntil != nil {
		s.RequeueAfter = st.ValidUntil.Sub(p.h.Now())
	}
	return s
}

// NoMatch implements framework.NoMatchExplainer: when the clusters that have the model all lack
// free capacity (not enough in total, or on too few nodes), it says so with their numbers (the
// first three); when no candidate has a node of the model at all, it names the annotation and
// the model and lists the models the candidates have.
func (p *Filter) NoMatch(candidates []*clusterv1.ManagedCluster) string {
	models := map[string][]string{}
	unknown := 0
	var misfits []string
	for _, c := range candidates {
		st, _ := Lookup(p.h, c.Name)
		if st == nil {
			unknown++
			continue
		}
		if Has(st, p.req.Resource, p.req.Model) {
			v := Fit(st, p.req)
			if v.Fits {
				return "" // it failed another filter: its explanation says which
			}
			misfits = append(misfits, c.Name+": "+v.Message)
			continue
		}
		for _, m := range Models(st, p.req.Resource) {
			models[m] = append(models[m], c.Name)
		}
	}
	if len(misfits) > 0 {
		// Clusters have the model, but not enough of it free now, or not on enough nodes.
		const most = 3
		msg := fmt.Sprintf("no eligible cluster has the free %s that %s asks for: %s", p.req.What(), AnnotationField,
			strings.Join(misfits[:min(most, len(misfits))], "; "))
		if len(misfits) > most {
			msg += fmt.Sprintf("; and %d more (see their explanations)", len(misfits)-most)
		}
		return msg
	}
	if unknown == len(candidates) {
		return fmt.Sprintf("%s asks for %s, but no eligible cluster has current figures: enable the resource-usage add-on (`flotilla addon enable resource-usage --clusters <names>`)",
			AnnotationField, p.req.What())
	}
	msg := fmt.Sprintf("no eligible cluster has %s", p.req.What())
	if p.req.Model != "" {
		msg = fmt.Sprintf("no eligible cluster has %s model %q that %s asks for (model=%s)", p.req.Resource, p.req.Model, AnnotationField, p.req.Model)
	} else {
		msg += " that " + AnnotationField + " asks for"
	}
	if len(models) == 0 {
		msg += "; the eligible clusters have no " + p.req.Resource + " of any model"
	} else {
		names := make([]string, 0, len(models))
		for m := range models {
			names = append(names, m)
		}
		sort.Strings(names)
		parts := make([]string, len(names))
		for i, m := range names {
			parts[i] = fmt.Sprintf("%s (%s)", m, strings.Join(models[m], ", "))
		}
		msg += "; the eligible clusters have " + strings.Join(parts, ", ") + ": set model= to one of them"
	}
	if unknown > 0 {
		msg += fmt.Sprintf("; %d eligible clusters have no current figures (see their explanations)", unknown)
	}
	return msg
}
