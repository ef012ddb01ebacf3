package scheduler

import (
	"regexp"
	"strings"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/addon"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/gpufit"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/predicate"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/spread"
)

// ClusterFields is a set of ManagedCluster fields a placement's decisions may depend on.
type ClusterFields uint8

// The fields a placement may read besides its clusters' set membership, taints and existence,
// which every placement depends on.
const (
	// FieldLabels: metadata.labels.
	FieldLabels ClusterFields = 1 << iota
	// FieldClaims: status.clusterClaims.
	FieldClaims
	// FieldAllocatable: status.allocatable.
	FieldAllocatable

	// AllFields is every field above.
	AllFields = FieldLabels | FieldClaims | FieldAllocatable

	// FieldResourceUsage: the cluster's ResourceUsage (usage.flotilla.io), read by the GPUFit
	// filter (the placement.flotilla.io/gpu annotation), the GPUFree and GPUBinPack
	// prioritizers and the CEL GPU functions. It is not a field of the ManagedCluster, and not in
	// AllFields: a CEL expression reads it only when it calls one of those functions.
	FieldResourceUsage ClusterFields = 1 << 7
)

// usageCall matches a call of a CEL function that reads the ResourceUsage.
var usageCall = regexp.MustCompile(`\b(` + strings.Join(predicate.ResourceUsageFunctions, "|") + `)\s*\(`)

// fieldsOfPrioritizer is what each built-in prioritizer reads of a cluster. Steady, Balance and
// AddOn read decisions and AddOnPlacementScores, not the cluster; Spread reads the topology keys,
// which FieldsRead takes from spec.spreadPolicy.
var fieldsOfPrioritizer = map[string]ClusterFields{
	clusterv1beta1.PrioritizerSteady:                    0,
	clusterv1beta1.PrioritizerBalance:                   0,
	clusterv1beta1.PrioritizerResourceAllocatableCPU:    FieldAllocatable,
	clusterv1beta1.PrioritizerResourceAllocatableMemory: FieldAllocatable,
	spread.PrioritizerName:                              0,
	addon.Name:                                          0,
	gpufit.FreeName:                                     FieldResourceUsage,
	gpufit.BinPackName:                                  FieldResourceUsage,
}

// FieldsRead returns the cluster fields p's predicates, prioritizers, spread constraints and
// decision groups read: a change to a cluster that touches none of them (nor its set membership,
// taints or existence) cannot change p's decisions. A CEL expression, or a prioritizer this
// function does not know, is taken to read every field (and the ResourceUsage). A plugin that
// reads a new field of the cluster must be described here.
func FieldsRead(p *clusterv1beta1.Placement) ClusterFields {
	var f ClusterFields
	if _, ok := p.Annotations[gpufit.Annotation]; ok {
		f |= FieldResourceUsage
	}
	selector := func(labels, claims, cel bool) {
		if labels {
			f |= FieldLabels
		}
		if claims {
			f |= FieldClaims
		}
		if cel {
			f |= AllFields
		}
	}
	for _, pr := range p.Spec.Predicates {
		s := pr.RequiredClusterSelector
		selector(!isEmptyLabelSelector(s.LabelSelector.MatchLabels, len(s.LabelSelector.MatchExpressions)),
			len(s.ClaimSelector.MatchExpressions) > 0, len(s.CelSelector.CelExpressions) > 0)
		for _, e := range s.CelSelector.CelExpressions {
			if usageCall.MatchString(e) {
				f |= FieldResourceUsage
			}
		}
	}
	for _, g := range p.Spec.DecisionStrategy.GroupStrategy.DecisionGroups {
		s := g.GroupClusterSelector
		selector(!isEmptyLabelSelector(s.LabelSelector.MatchLabels, len(s.LabelSelector.MatchExpressions)),
			len(s.ClaimSelector.MatchExpressions) > 0, false)
	}
	for _, c := range p.Spec.SpreadPolicy.SpreadConstraints {
		selector(c.TopologyKeyType == clusterv1beta1.TopologyKeyTypeLabel, c.TopologyKeyType == clusterv1beta1.TopologyKeyTypeClaim, false)
	}
	for _, c := range p.Spec.PrioritizerPolicy.Configurations {
		name := ""
		if sc := c.ScoreCoordinate; sc != nil {
			name = sc.BuiltIn
			if sc.Type == clusterv1beta1.ScoreCoordinateTypeAddOn {
				name = addon.Name
			}
		}
		read, known := fieldsOfPrioritizer[name]
		if !known {
			read = AllFields | FieldResourceUsage
		}
		f |= read
	}
	return f
}

func isEmptyLabelSelector(matchLabels map[string]string, expressions int) bool {
	return len(matchLabels) == 0 && expressions == 0
}
