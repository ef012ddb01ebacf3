package fencing

import (
	"encoding/json"
	"fmt"
	"slices"
)

// AnnotationRequeued records on a ManagedCluster the hub declared lost which workloads the hub put
// back in its queue because of that loss (Requeued, as JSON), so that a loss's timeline can follow
// each one to where it runs next: Kueue's own record of where a workload ran is overwritten when
// it is admitted again. The hub writes it once per requeue pass, not once per workload.
const AnnotationRequeued = "failover.flotilla.io/requeued"

// MaxRequeuedNames bounds the names a record keeps (about 60 bytes each); beyond it only More
// counts them.
const MaxRequeuedNames = 500

// Requeued is one loss's record of the workloads it requeued.
type Requeued struct {
	// Epoch is the cluster's epoch at the loss: a record of an older epoch is of an older loss.
	Epoch int64 `json:"epoch"`
	// Workloads are "namespace/name" of the hub's Kueue Workloads requeued, in the order they were,
	// at most MaxRequeuedNames.
	Workloads []string `json:"workloads"`
	// More counts the workloads requeued beyond MaxRequeuedNames.
	More int `json:"more,omitempty"`
}

// RequeuedOf reads a ManagedCluster's AnnotationRequeued; ok is false when it has none, and the
// error says why one does not parse.
func RequeuedOf(annotations map[string]string) (Requeued, bool, error) {
	s, found := annotations[AnnotationRequeued]
	if !found {
		return Requeued{}, false, nil
	}
	var r Requeued
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return Requeued{}, false, fmt.Errorf("annotation %s: %w", AnnotationRequeued, err)
	}
	if r.Epoch < 0 || r.More < 0 || len(r.Workloads) > MaxRequeuedNames {
		return Requeued{}, false, fmt.Errorf("annotation %s: epoch and more must not be negative, and at most %d workloads are named", AnnotationRequeued, MaxRequeuedNames)
	}
	return r, true, nil
}

// WithRequeued is the record after requeueing names under epoch: added to prev when prev is of
// the same epoch (a loss is requeued in several passes), else a new record. A name already there
// is not added twice.
func WithRequeued(prev Requeued, epoch int64, names []string) Requeued {
	out := Requeued{Epoch: epoch, Workloads: []string{}}
	if prev.Epoch == epoch {
		out.Workloads, out.More = slices.Clone(prev.Workloads), prev.More
	}
	for _, n := range names {
		switch {
		case slices.Contains(out.Workloads, n):
		case len(out.Workloads) < MaxRequeuedNames:
			out.Workloads = append(out.Workloads, n)
		default:
			out.More++
		}
	}
	return out
}

// String is the record as the annotation holds it.
func (r Requeued) String() string {
	b, _ := json.Marshal(r)
	return string(b)
}
