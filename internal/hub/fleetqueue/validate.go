package fleetqueue

import (
	"errors"
	"fmt"

	queuev1alpha1 "github.com/flotilla/flotilla/api/queue/v1alpha1"
)

// Validate refuses what cannot be written at all, naming the field and the fix: a weight not
// above 0, two teams with one LocalQueue (namespace and name) or one name.
func Validate(fq *queuev1alpha1.FleetQueue) error {
	var errs []error
	names := map[string]int{}
	queues := map[string]int{}
	for i, t := range fq.Spec.Teams {
		if t.Weight.Sign() <= 0 {
			errs = append(errs, fmt.Errorf("FleetQueue %s: spec.teams[%d].weight is %s: a fair-sharing weight must be above 0; set it to 1 for an equal share", fq.Name, i, t.Weight.String()))
		}
		if j, ok := names[t.Name]; ok {
			errs = append(errs, fmt.Errorf("FleetQueue %s: spec.teams[%d].name %q is also spec.teams[%d]'s: give each team its own name", fq.Name, i, t.Name, j))
		}
		names[t.Name] = i
		q := t.Namespace + "/" + LocalQueueName(t)
		if j, ok := queues[q]; ok {
			errs = append(errs, fmt.Errorf("FleetQueue %s: spec.teams[%d] and spec.teams[%d] both submit to LocalQueue %s: give one another namespace or spec.teams[%d].localQueue", fq.Name, j, i, q, i))
		}
		queues[q] = i
	}
	return errors.Join(errs...)
}
