// Package predicate filters clusters by spec.predicates: the predicates are ORed; within one,
// the label selector and the claim selector (against status.clusterClaims) are ANDed. An empty
// predicate list keeps every cluster. CEL selectors come in a later slice: a placement that uses
// them is reported misconfigured rather than silently scheduled without them.
package predicate

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/scheduler/framework"
)

// Name is the plugin's name in the registry and in explanations.
const Name = "Predicate"

var _ framework.FilterPlugin = &Predicate{}

// Predicate is the compiled spec.predicates of one placement.
type Predicate struct {
	terms []Selector
}

// Selector is one compiled label-and-claim selector.
type Selector struct {
	labels labels.Selector
	claims labels.Selector
}

// New compiles the placement's predicates.
func New(h framework.Handle, _ framework.Args) (framework.Plugin, error) {
	p := &Predicate{}
	for i, pred := range h.Placement().Spec.Predicates {
		field := fmt.Sprintf("spec.predicates[%d].requiredClusterSelector", i)
		if n := len(pred.RequiredClusterSelector.CelSelector.CelExpressions); n > 0 {
			return nil, &framework.ConfigError{Field: field + ".celSelector.celExpressions",
				Message: "CEL selectors are not supported by this Flotilla version yet; express the predicate with labelSelector or claimSelector"}
		}
		sel, err := CompileSelector(field, pred.RequiredClusterSelector.LabelSelector, pred.RequiredClusterSelector.ClaimSelector)
		if err != nil {
			return nil, err
		}
		p.terms = append(p.terms, sel)
	}
	return p, nil
}

// CompileSelector compiles a label selector and a claim selector; field prefixes error fields.
func CompileSelector(field string, ls metav1.LabelSelector, cs clusterv1beta1.ClusterClaimSelector) (Selector, error) {
	lsel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return Selector{}, &framework.ConfigError{Field: field + ".labelSelector", Message: err.Error()}
	}
	csel, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchExpressions: cs.MatchExpressions})
	if err != nil {
		return Selector{}, &framework.ConfigError{Field: field + ".claimSelector", Message: err.Error()}
	}
	return Selector{labels: lsel, claims: csel}, nil
}

// Mismatch returns "" when the cluster matches, else the first requirement it fails.
func (s Selector) Mismatch(c *clusterv1.ManagedCluster) string {
	if !s.labels.Empty() {
		set := labels.Set(c.Labels)
		if !s.labels.Matches(set) {
			return "label " + firstFailing(s.labels, set)
		}
	}
	if !s.claims.Empty() {
		set := Claims(c)
		if !s.claims.Matches(set) {
			return "claim " + firstFailing(s.claims, set)
		}
	}
	return ""
}

// Claims returns the cluster's claims as a label set.
func Claims(c *clusterv1.ManagedCluster) labels.Set {
	set := make(labels.Set, len(c.Status.ClusterClaims))
	for _, cl := range c.Status.ClusterClaims {
		set[cl.Name] = cl.Value
	}
	return set
}

func firstFailing(sel labels.Selector, set labels.Set) string {
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		if !r.Matches(set) {
			if v, ok := set[r.Key()]; ok {
				return fmt.Sprintf("%s not met (has %s=%s)", r.String(), r.Key(), v)
			}
			return fmt.Sprintf("%s not met (no %s)", r.String(), r.Key())
		}
	}
	return sel.String() + " not met"
}

// Name implements framework.Plugin.
func (p *Predicate) Name() string { return Name }

// Filter keeps a cluster that matches at least one predicate.
func (p *Predicate) Filter(c *clusterv1.ManagedCluster) *framework.Status {
	if len(p.terms) == 0 {
		return nil
	}
	why := make([]string, 0, len(p.terms))
	for i, t := range p.terms {
		m := t.Mismatch(c)
		if m == "" {
			return nil
		}
		why = append(why, fmt.Sprintf("predicates[%d]: %s", i, m))
	}
	return framework.NewStatus(framework.Unschedulable, strings.Join(why, "; "))
}
