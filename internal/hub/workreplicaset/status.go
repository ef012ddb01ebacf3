package workreplicaset

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla/flotilla/api/work/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/rollout"
	"github.com/flotilla/flotilla/internal/hub/delivery"
)

// refOutcome is what one reconcile found and did for one placementRef.
type refOutcome struct {
	Name string
	// Err is why the placement's rollout could not be decided (bad decisions or strategy).
	Err string
	// Clusters are the placement's decided clusters that this ref serves (a cluster two refs
	// select is served by one).
	Clusters []rollout.Cluster
	// Refused are the placement's decided clusters the hub puts no ManifestWork in (package
	// delivery), each with why; they are not in Clusters.
	Refused []*delivery.Refusal
	Result  rollout.Result
	// Conflicts are ManifestWorks in the way that the set did not create (namespace/name).
	Conflicts []string
}

// view is the set's ManifestWorks after this reconcile's writes, by cluster (namespace), and
// whether each has the current template.
type view struct {
	works   map[string]*workv1.ManifestWork
	current map[string]bool
}

// summarize counts works (not being deleted) that belong to placement ("" for all) and, of
// the clusters given, those that the rollout is done with.
func (v view) summarize(placement string, clusters []rollout.Cluster) workv1alpha1.ManifestWorkReplicaSetSummary {
	var s workv1alpha1.ManifestWorkReplicaSetSummary
	for c, w := range v.works {
		if !w.DeletionTimestamp.IsZero() || (placement != "" && w.Labels[PlacementLabel] != placement) {
			continue
		}
		s.Total++
		conds := w.Status.Conditions
		if meta.IsStatusConditionTrue(conds, workv1.WorkApplied) {
			s.Applied++
		}
		if meta.IsStatusConditionTrue(conds, workv1.WorkAvailable) {
			s.Available++
		}
		if meta.IsStatusConditionTrue(conds, workv1.WorkProgressing) {
			s.Progressing++
		}
		if meta.IsStatusConditionTrue(conds, workv1.WorkDegraded) {
			s.Degraded++
		}
		if v.current[c] {
			s.Updated++
		}
	}
	s.DesiredTotal = len(clusters)
	return s
}

// succeeded counts clusters whose work has the current template and has succeeded.
func (v view) succeeded(clusters []rollout.Cluster) int {
	n := 0
	for _, c := range clusters {
		if w := v.works[c.Name]; w != nil && v.current[c.Name] && w.DeletionTimestamp.IsZero() && clusterState(w).Status == rollout.Succeeded {
			n++
		}
	}
	return n
}

// availableGroups says how many of the decision groups have every cluster's work Available, as
// "available/groups".
func (v view) availableGroups(clusters []rollout.Cluster) string {
	all, notAvailable := map[rollout.GroupKey]bool{}, map[rollout.GroupKey]bool{}
	for _, c := range clusters {
		all[c.Group] = true
		w := v.works[c.Name]
		if w == nil || !v.current[c.Name] || !meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkAvailable) {
			notAvailable[c.Group] = true
		}
	}
	return fmt.Sprintf("%d/%d", len(all)-len(notAvailable), len(all))
}

// desiredStatus is set's status after this reconcile: the summaries and OCM's three conditions
// with their reasons, for set's generation. Transition times come from now for conditions that
// change.
func desiredStatus(set *workv1alpha1.ManifestWorkReplicaSet, refs []refOutcome, v view, now metav1.Time) workv1alpha1.ManifestWorkReplicaSetStatus {
	st := *set.Status.DeepCopy()
	var clusters []rollout.Cluster
	st.PlacementsSummary = make([]workv1alpha1.PlacementSummary, 0, len(refs))
	succeeded := 0
	var errs, rollouts []string
	var refused []*delivery.Refusal
	for _, r := range refs {
		clusters = append(clusters, r.Clusters...)
		refused = append(refused, r.Refused...)
		st.PlacementsSummary = append(st.PlacementsSummary, workv1alpha1.PlacementSummary{
			Name: r.Name, AvailableDecisionGroups: v.availableGroups(r.Clusters), Summary: v.summarize(r.Name, r.Clusters),
		})
		ok := v.succeeded(r.Clusters)
		succeeded += ok
		if r.Err != "" {
			errs = append(errs, r.Err)
			continue
		}
		if m := rolloutMessage(r, ok); m != "" {
			rollouts = append(rollouts, m)
		}
	}
	st.Summary = v.summarize("", clusters)

	set1 := func(typ string, ok bool, reason, msg string) {
		c := metav1.Condition{Type: typ, Status: metav1.ConditionFalse, Reason: reason, Message: msg,
			ObservedGeneration: set.Generation, LastTransitionTime: now}
		if ok {
			c.Status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, c)
	}
	switch {
	case len(errs) > 0:
		set1(workv1alpha1.ManifestWorkReplicaSetConditionPlacementVerified, false, workv1alpha1.ReasonNotAsExpected, strings.Join(errs, "; "))
	case len(clusters)+len(refused) == 0:
		set1(workv1alpha1.ManifestWorkReplicaSetConditionPlacementVerified, false, workv1alpha1.ReasonPlacementDecisionEmpty,
			fmt.Sprintf("placements %s select no cluster", refNames(refs)))
	default:
		set1(workv1alpha1.ManifestWorkReplicaSetConditionPlacementVerified, true, workv1alpha1.ReasonAsExpected,
			fmt.Sprintf("%d clusters selected", len(clusters)+len(refused))+prefixed("; ", refusedMessage(refused)))
	}
	if succeeded == len(clusters) {
		set1(workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut, true, workv1alpha1.ReasonComplete,
			fmt.Sprintf("all %d clusters run the current template", len(clusters)))
	} else {
		set1(workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut, false, workv1alpha1.ReasonProgressing,
			fmt.Sprintf("%d of %d clusters run the current template successfully", succeeded, len(clusters))+prefixed("; ", strings.Join(rollouts, "; ")))
	}
	s := st.Summary
	switch {
	case s.Total == 0 && meta.FindStatusCondition(st.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementVerified).Reason == workv1alpha1.ReasonPlacementDecisionEmpty:
		set1(workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied, false, workv1alpha1.ReasonPlacementDecisionEmpty, "no ManifestWork: no cluster is selected")
	case s.Total == 0:
		set1(workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied, false, workv1alpha1.ReasonNotAsExpected, "no ManifestWork created yet")
	case s.Available == s.Total && s.Progressing == 0 && s.Degraded == 0:
		set1(workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied, true, workv1alpha1.ReasonAsExpected,
			fmt.Sprintf("all %d ManifestWorks are available", s.Total))
	case s.Progressing > 0 && s.Degraded == 0:
		set1(workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied, false, workv1alpha1.ReasonProcessing,
			fmt.Sprintf("%d of %d ManifestWorks are progressing", s.Progressing, s.Total))
	default:
		set1(workv1alpha1.ManifestWorkReplicaSetConditionManifestworkApplied, false, workv1alpha1.ReasonNotAsExpected,
			fmt.Sprintf("%d of %d ManifestWorks are available, %d degraded", s.Available, s.Total, s.Degraded))
	}
	return st
}

// notFoundStatus is set's status when a placement it names does not exist: PlacementVerified
// says which, the rest stays as it was (nothing is rolled out or removed meanwhile).
func notFoundStatus(set *workv1alpha1.ManifestWorkReplicaSet, placement string, index int, now metav1.Time) workv1alpha1.ManifestWorkReplicaSetStatus {
	st := *set.Status.DeepCopy()
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: workv1alpha1.ManifestWorkReplicaSetConditionPlacementVerified, Status: metav1.ConditionFalse,
		Reason: workv1alpha1.ReasonPlacementDecisionNotFound, ObservedGeneration: set.Generation, LastTransitionTime: now,
		Message: fmt.Sprintf("Placement %q (spec.placementRefs[%d].name) does not exist in namespace %s: create it or name an existing Placement",
			placement, index, set.Namespace),
	})
	return st
}

// maxRefusedNamed is how many held-back clusters a status message names; the rest are counted.
const maxRefusedNamed = 10

// refusedMessage says which selected clusters get no ManifestWork and why, "" when none.
func refusedMessage(refused []*delivery.Refusal) string {
	if len(refused) == 0 {
		return ""
	}
	rs := slices.Clone(refused)
	slices.SortFunc(rs, func(a, b *delivery.Refusal) int { return strings.Compare(a.Cluster, b.Cluster) })
	rs = slices.CompactFunc(rs, func(a, b *delivery.Refusal) bool { return a.Cluster == b.Cluster })
	var parts []string
	for i, r := range rs {
		if i == maxRefusedNamed {
			parts = append(parts, fmt.Sprintf("and %d more", len(rs)-i))
			break
		}
		parts = append(parts, r.Message)
	}
	return fmt.Sprintf("%d of them get no ManifestWork: %s", len(rs), strings.Join(parts, "; "))
}

// rolloutMessage says what holds the rollout to one placement, "" when nothing does.
func rolloutMessage(r refOutcome, succeeded int) string {
	var parts []string
	if r.Result.MaxFailureBreach {
		parts = append(parts, "stopped: more clusters failed or timed out than maxFailures allows")
	}
	if len(r.Result.TimedOut) > 0 {
		parts = append(parts, "timed out (progressDeadline): "+clusterNames(r.Result.TimedOut))
	}
	var failed []rollout.ClusterStatus
	for _, c := range r.Result.ToRollout {
		if c.Status == rollout.Failed {
			failed = append(failed, c)
		}
	}
	if len(failed) > 0 {
		parts = append(parts, "failed: "+clusterNames(failed))
	}
	if len(r.Conflicts) > 0 {
		parts = append(parts, "ManifestWorks in the way, not created by this ManifestWorkReplicaSet (delete or rename them): "+strings.Join(r.Conflicts, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("placement %s (%d/%d succeeded): %s", r.Name, succeeded, len(r.Clusters), strings.Join(parts, "; "))
}

func clusterNames(cs []rollout.ClusterStatus) string {
	names := make([]string, 0, len(cs))
	for _, c := range cs {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func refNames(refs []refOutcome) string {
	names := make([]string, 0, len(refs))
	for _, r := range refs {
		names = append(names, r.Name)
	}
	return strings.Join(names, ", ")
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}
