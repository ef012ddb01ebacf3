// Package predicate filters clusters by spec.predicates: the predicates are ORed; within one,
// the label selector, the claim selector (against status.clusterClaims) and the CEL expressions
// (over the variable managedCluster, with managedCluster.scores(name) and the GPU functions
// freeGPUs, nodesWithFreeGPUs, gpuFit and nodesWithFree, which read the cluster's ResourceUsage
// through plugins/gpufit, see celgpu.go) are ANDed. An empty
// predicate list keeps every cluster. An expression that does not compile, or does not give a
// bool, makes the placement misconfigured, naming the expression's index.
package predicate

import (
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
)

// Name is the plugin's name in the registry and in explanations.
const Name = "Predicate"

var _ framework.FilterPlugin = &Predicate{}

// Predicate is the compiled spec.predicates of one placement.
type Predicate struct {
	h     framework.Handle
	terms []Selector
}

// Selector is one compiled label-and-claim selector.
type Selector struct {
	labels labels.Selector
	claims labels.Selector
	// claimReqs are the claims' requirements, matched one by one against the claims in place.
	claimReqs []labels.Requirement
	cel       []celExpr
}

// New compiles the placement's predicates.
func New(h framework.Handle, _ framework.Args) (framework.Plugin, error) {
	p := &Predicate{h: h}
	var env *cel.Env
	for i, pred := range h.Placement().Spec.Predicates {
		field := fmt.Sprintf("spec.predicates[%d].requiredClusterSelector", i)
		sel, err := CompileSelector(field, pred.RequiredClusterSelector.LabelSelector, pred.RequiredClusterSelector.ClaimSelector)
		if err != nil {
			return nil, err
		}
		if exprs := pred.RequiredClusterSelector.CelSelector.CelExpressions; len(exprs) > 0 {
			if env == nil {
				if env, err = newCELEnv(h); err != nil {
					return nil, err
				}
			}
			if sel.cel, err = compileCEL(env, field+".celSelector.celExpressions", exprs); err != nil {
				return nil, err
			}
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
	reqs, _ := csel.Requirements()
	return Selector{labels: lsel, claims: csel, claimReqs: reqs}, nil
}

// Mismatch returns "" when the cluster matches, else the first requirement it fails.
func (s Selector) Mismatch(c *clusterv1.ManagedCluster) string {
	return s.mismatch(c, &activation{cluster: c})
}

func (s Selector) mismatch(c *clusterv1.ManagedCluster, act *activation) string {
	if !s.labels.Empty() {
		set := labels.Set(c.Labels)
		if !s.labels.Matches(set) {
			return "label " + firstFailing(s.labels, set)
		}
	}
	if !s.claims.Empty() {
		for i := range s.claimReqs {
			if !matchClaim(&s.claimReqs[i], c.Status.ClusterClaims) {
				return "claim " + firstFailing(s.claims, Claims(c))
			}
		}
	}
	if len(s.cel) > 0 {
		return celMismatch(s.cel, act)
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

// matchClaim matches one requirement against the claims in place: a cluster has few claims, and
// copying them into a labels.Set per cluster was the filter's largest cost. The operators of a
// claim selector's matchExpressions are In, NotIn, Exists and DoesNotExist.
func matchClaim(r *labels.Requirement, claims []clusterv1.ManagedClusterClaim) bool {
	v, has := "", false
	for i := range claims {
		if claims[i].Name == r.Key() {
			v, has = claims[i].Value, true
			break
		}
	}
	switch r.Operator() {
	case selection.In:
		return has && r.Values().Has(v)
	case selection.NotIn:
		return !has || !r.Values().Has(v)
	case selection.Exists:
		return has
	case selection.DoesNotExist:
		return !has
	}
	set := labels.Set{}
	if has {
		set[r.Key()] = v
	}
	return r.Matches(set)
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
	var why []string
	act := activation{h: p.h, cluster: c}
	for i, t := range p.terms {
		m := t.mismatch(c, &act)
		if m == "" {
			return nil
		}
		why = append(why, fmt.Sprintf("predicates[%d]: %s", i, m))
	}
	return framework.NewStatus(framework.Unschedulable, strings.Join(why, "; "))
}
