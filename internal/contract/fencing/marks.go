package fencing

import "strings"

// Marks on ManifestWorks and spoke objects.
const (
	// AnnotationWorkFenced on a ManifestWork, "true", asks for its workloads to be fenced.
	AnnotationWorkFenced = "failover.flotilla.io/fenced"
	// LabelFenced, "true", is set by the work agent on every object a fenced work applies.
	LabelFenced = "failover.flotilla.io/fenced"
	// AnnotationWork names, on a spoke object LabelFenced, the ManifestWork that applied it.
	AnnotationWork = "failover.flotilla.io/work"
	// AnnotationStopped records on a spoke object that the agent stopped it, and what to restore
	// (Stopped).
	AnnotationStopped = "failover.flotilla.io/stopped"
	// LabelMultiKueueOrigin is the label MultiKueue puts on the objects it creates on a worker.
	LabelMultiKueueOrigin = "kueue.x-k8s.io/multikueue-origin"
)

// ConditionWorkloadsFenced is the ManagedCluster condition in which the agent reports a fence
// once the link to the hub returns: when it was raised and lowered, and what it stopped,
// resumed and removed.
const ConditionWorkloadsFenced = "WorkloadsFenced"

// WorkFenced says whether a ManifestWork with these annotations asks for fencing.
func WorkFenced(annotations map[string]string) bool {
	return strings.EqualFold(annotations[AnnotationWorkFenced], "true")
}

// FencedLabels are the labels and annotations the work agent adds to what a fenced work named
// work applies.
func FencedLabels(work string) (labels, annotations map[string]string) {
	return map[string]string{LabelFenced: "true"}, map[string]string{AnnotationWork: work}
}
