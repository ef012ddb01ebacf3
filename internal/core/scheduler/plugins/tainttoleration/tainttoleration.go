// Package tainttoleration filters clusters by their taints and the placement's tolerations, as
// OCM does: an untolerated NoSelect taint filters the cluster; NoSelectIfNew filters it only when
// it is not already among the placement's decisions; a toleration with tolerationSeconds stops
// tolerating that many seconds after the taint's timeAdded, and the plugin asks for a requeue at
// that moment, and never tolerates a taint that has no timeAdded (as OCM). PreferNoSelect never
// filters; Flotilla demotes an untolerated PreferNoSelect cluster so that it ranks after every
// cluster without one (OCM accepts and ignores the effect).
package tainttoleration

import (
	"fmt"
	"strings"
	"time"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler/framework"
)

// Name is the plugin's name in the registry and in explanations.
const Name = "TaintToleration"

var _ framework.FilterPlugin = &TaintToleration{}

// TaintToleration is the plugin for one placement.
type TaintToleration struct {
	h framework.Handle
}

// New returns the plugin, after checking the tolerations as OCM does.
func New(h framework.Handle, _ framework.Args) (framework.Plugin, error) {
	for i, t := range h.Placement().Spec.Tolerations {
		switch {
		case t.Key == "" && t.Operator != clusterv1beta1.TolerationOpExists:
			return nil, &framework.ConfigError{Field: fmt.Sprintf("spec.tolerations[%d].operator", i),
				Message: "must be Exists when key is empty (an empty key with Exists tolerates every taint); or give a key"}
		case t.Operator == clusterv1beta1.TolerationOpExists && t.Value != "":
			return nil, &framework.ConfigError{Field: fmt.Sprintf("spec.tolerations[%d].value", i),
				Message: "must be empty when operator is Exists; use operator Equal to match a value"}
		}
	}
	return &TaintToleration{h: h}, nil
}

// Name implements framework.Plugin.
func (p *TaintToleration) Name() string { return Name }

// Filter implements framework.FilterPlugin.
func (p *TaintToleration) Filter(c *clusterv1.ManagedCluster) *framework.Status {
	tolerations := p.h.Placement().Spec.Tolerations
	now := p.h.Now()
	var requeue time.Duration
	var prefer, until []string
	for _, taint := range c.Spec.Taints {
		if taint.Effect == clusterv1.TaintEffectNoSelectIfNew && p.h.InCurrentDecisions(c.Name) {
			continue
		}
		tolerated, expiry, why := Tolerated(taint, tolerations, now)
		if tolerated {
			if !expiry.IsZero() {
				if d := expiry.Sub(now); requeue == 0 || d < requeue {
					requeue = d
				}
				until = append(until, describe(taint)+" tolerated until "+expiry.UTC().Format(time.RFC3339))
			}
			continue
		}
		if taint.Effect == clusterv1.TaintEffectPreferNoSelect {
			prefer = append(prefer, describe(taint))
			continue
		}
		msg := "untolerated taint " + describe(taint)
		if why != "" {
			msg = "taint " + describe(taint) + " " + why
		}
		return framework.NewStatus(framework.Unschedulable, msg)
	}
	if len(prefer) > 0 {
		until = append([]string{"ranked after clusters without it: untolerated taint " + strings.Join(prefer, ", ")}, until...)
		return &framework.Status{Code: framework.Demoted, RequeueAfter: requeue, Message: strings.Join(until, "; ")}
	}
	if requeue > 0 {
		return &framework.Status{Code: framework.Success, RequeueAfter: requeue, Message: strings.Join(until, "; ")}
	}
	return nil
}

// Tolerated reports whether some toleration tolerates the taint at now, as OCM decides: a
// matching toleration without tolerationSeconds tolerates it for ever; one with tolerationSeconds
// until that many seconds after the taint's timeAdded, and not at all when the taint has no
// timeAdded (OCM counts the seconds from the zero time, so they ran out long ago). expiry is when
// the tolerating toleration stops (zero: never). When none tolerates the taint but some matched,
// why says why the first of those did not, for the explanation ("" when none matched).
func Tolerated(taint clusterv1.Taint, tolerations []clusterv1beta1.Toleration, now time.Time) (tolerated bool, expiry time.Time, why string) {
	for i, t := range tolerations {
		if !Matches(taint, t) {
			continue
		}
		switch {
		case t.TolerationSeconds == nil:
			return true, time.Time{}, ""
		case taint.TimeAdded == nil:
			if why == "" {
				why = fmt.Sprintf("not tolerated: spec.tolerations[%d] has tolerationSeconds, which count from the taint's timeAdded, "+
					"and the taint has no timeAdded; as in OCM, only a toleration without tolerationSeconds tolerates such a taint", i)
			}
		default:
			end := taint.TimeAdded.Add(time.Duration(*t.TolerationSeconds) * time.Second)
			if now.Before(end) {
				return true, end, ""
			}
			if why == "" {
				why = "no longer tolerated: tolerationSeconds expired"
			}
		}
	}
	return false, time.Time{}, why
}

// Matches reports whether the toleration matches the taint, as OCM: an empty effect matches every
// effect, an empty key every key; operator Exists matches any value, Equal (or empty) the same
// value.
func Matches(taint clusterv1.Taint, t clusterv1beta1.Toleration) bool {
	if t.Effect != "" && string(t.Effect) != string(taint.Effect) {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case clusterv1beta1.TolerationOpExists:
		return true
	case clusterv1beta1.TolerationOpEqual, "":
		return t.Value == taint.Value
	}
	return false
}

func describe(t clusterv1.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}
