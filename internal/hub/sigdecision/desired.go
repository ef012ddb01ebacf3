package sigdecision

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	multiclusterv1alpha1 "github.com/flotilla/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler"
	"github.com/flotilla/flotilla/internal/hub/placement"
)

// SchedulerName is the schedulerName of every PlacementDecision the hub writes.
const SchedulerName = "flotilla"

// ourLabels are the labels the mirror sets on a SIG PlacementDecision; others are left alone.
var ourLabels = []string{
	clusterv1beta1.PlacementLabel,
	multiclusterv1alpha1.LabelPlacementKey,
	multiclusterv1alpha1.LabelDecisionKey,
	multiclusterv1alpha1.LabelDecisionIndex,
}

// controlled returns the objects of items whose controller is the placement with UID uid.
func controlled[T any, PT interface {
	*T
	metav1.Object
}](uid string, items []T) []T {
	var out []T
	for i := range items {
		if ref := metav1.GetControllerOf(PT(&items[i])); ref != nil && string(ref.UID) == uid {
			out = append(out, items[i])
		}
	}
	return out
}

// sliceNumber is N in the OCM name <placement>-decision-<N>, or false for another name.
func sliceNumber(placementName, name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, placementName+"-decision-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n > 0
}

// sortOCM orders a placement's OCM PlacementDecisions as the placement controller numbers them
// (<placement>-decision-1, -2, …, -10: by number, not by name), any other name after them.
func sortOCM(placementName string, ds []clusterv1beta1.PlacementDecision) {
	slices.SortStableFunc(ds, func(a, b clusterv1beta1.PlacementDecision) int {
		na, oka := sliceNumber(placementName, a.Name)
		nb, okb := sliceNumber(placementName, b.Name)
		switch {
		case oka && okb && na != nb:
			return na - nb
		case oka != okb:
			if oka {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// labelsFor are the labels of the index-th (0-based) SIG slice of placementName.
func labelsFor(placementName string, index int) map[string]string {
	return map[string]string{
		clusterv1beta1.PlacementLabel:           placementName,
		multiclusterv1alpha1.LabelPlacementKey:  placementName,
		multiclusterv1alpha1.LabelDecisionKey:   placementName,
		multiclusterv1alpha1.LabelDecisionIndex: strconv.Itoa(index),
	}
}

// Desired returns the SIG slices mirroring ocm, the OCM PlacementDecisions that placement
// placementName controls: one per OCM slice, with its name, in the placement controller's order,
// each holding the same clusters in the same order with the same reasons. Decisions without a
// cluster name are skipped (a ClusterProfile reference needs one).
func Desired(placementName string, ocm []clusterv1beta1.PlacementDecision) []scheduler.PlacementDecisionSlice {
	ocm = slices.Clone(ocm)
	sortOCM(placementName, ocm)
	out := make([]scheduler.PlacementDecisionSlice, 0, len(ocm))
	for i := range ocm {
		ds := make([]clusterv1beta1.ClusterDecision, 0, len(ocm[i].Status.Decisions))
		for _, d := range ocm[i].Status.Decisions {
			if d.ClusterName != "" {
				ds = append(ds, clusterv1beta1.ClusterDecision{ClusterName: d.ClusterName, Reason: d.Reason})
			}
		}
		out = append(out, scheduler.PlacementDecisionSlice{Name: ocm[i].Name, Labels: labelsFor(placementName, i), Decisions: ds})
	}
	return out
}

// asSlice is what a SIG PlacementDecision holds, in the scheduler's terms, so that
// placement.Plan can order the writes. A reference to a ClusterProfile in another namespace than
// ns (which the mirror never writes) is shown as "namespace/name", a name no cluster has, so it
// differs from every desired decision.
func asSlice(ns string, d *multiclusterv1alpha1.PlacementDecision) scheduler.PlacementDecisionSlice {
	s := scheduler.PlacementDecisionSlice{Name: d.Name, Labels: map[string]string{}}
	for _, k := range ourLabels {
		if v, ok := d.Labels[k]; ok {
			s.Labels[k] = v
		}
	}
	s.Decisions = make([]clusterv1beta1.ClusterDecision, 0, len(d.Decisions))
	for _, cd := range d.Decisions {
		name := cd.ClusterProfileRef.Name
		if refNS := cd.ClusterProfileRef.Namespace; refNS != ns {
			name = refNS + "/" + name
		}
		s.Decisions = append(s.Decisions, clusterv1beta1.ClusterDecision{ClusterName: name, Reason: cd.Reason})
	}
	return s
}

// sigDecisions are the decisions of a SIG slice: each cluster's ClusterProfile, which the
// clusterprofile controller names after the cluster in the placement's namespace ns.
func sigDecisions(ns string, s scheduler.PlacementDecisionSlice) []multiclusterv1alpha1.ClusterDecision {
	out := make([]multiclusterv1alpha1.ClusterDecision, 0, len(s.Decisions))
	for _, d := range s.Decisions {
		reason := d.Reason
		if len(reason) > maxReason {
			reason = reason[:maxReason]
		}
		out = append(out, multiclusterv1alpha1.ClusterDecision{
			ClusterProfileRef: multiclusterv1alpha1.ClusterProfileReference{Name: d.ClusterName, Namespace: ns},
			Reason:            reason,
		})
	}
	return out
}

// maxReason is the CRD's bound on a reason (both APIs have the same today).
const maxReason = 1024

// UpToDate reports whether current (the SIG PlacementDecisions the placement controls) are
// exactly desired, schedulerName included.
func UpToDate(ns string, current []multiclusterv1alpha1.PlacementDecision, desired []scheduler.PlacementDecisionSlice) bool {
	if len(current) != len(desired) {
		return false
	}
	byName := map[string]*multiclusterv1alpha1.PlacementDecision{}
	for i := range current {
		byName[current[i].Name] = &current[i]
	}
	for _, s := range desired {
		d, ok := byName[s.Name]
		if !ok || d.SchedulerName != SchedulerName || !placement.Same(asSlice(ns, d), s) {
			return false
		}
	}
	return true
}

// Steps orders the writes that take current to desired with placement.Plan, so that no cluster
// in both vanishes from all slices meanwhile. A spare slice that Plan adds to break a cycle gets
// its own decision-index (after the desired slices') instead of the one it copied. A slice whose
// content is already right but whose schedulerName is not is rewritten first.
func Steps(ns string, current []multiclusterv1alpha1.PlacementDecision, desired []scheduler.PlacementDecisionSlice) []placement.Step {
	cur := make([]scheduler.PlacementDecisionSlice, len(current))
	byName := map[string]*multiclusterv1alpha1.PlacementDecision{}
	for i := range current {
		cur[i] = asSlice(ns, &current[i])
		byName[current[i].Name] = &current[i]
	}
	planned := placement.Plan(cur, desired)
	written := map[string]bool{}
	for _, st := range planned {
		written[st.Slice.Name] = true
	}
	var steps []placement.Step
	desiredNames := map[string]bool{}
	for _, s := range desired {
		desiredNames[s.Name] = true
		if d, ok := byName[s.Name]; ok && !written[s.Name] && d.SchedulerName != SchedulerName {
			steps = append(steps, placement.Step{Slice: s})
		}
	}
	spares := map[string]string{}
	for _, st := range planned {
		if !st.Delete && !desiredNames[st.Slice.Name] {
			idx, ok := spares[st.Slice.Name]
			if !ok {
				idx = strconv.Itoa(len(desired) + len(spares))
				spares[st.Slice.Name] = idx
			}
			st.Slice.Labels = maps.Clone(st.Slice.Labels)
			st.Slice.Labels[multiclusterv1alpha1.LabelDecisionIndex] = idx
		}
		steps = append(steps, st)
	}
	return steps
}
