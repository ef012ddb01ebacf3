package fleetqueue

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	queuev1alpha1 "github.com/flotilla/flotilla/api/queue/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// apply writes d's objects, and the teams' queues to every cluster of workers (WorkerQueues),
// and deletes the FleetQueue's objects it no longer needs. It returns the objects of needed
// names that are not the FleetQueue's, which it leaves alone.
func (r *Reconciler) apply(ctx context.Context, fq *queuev1alpha1.FleetQueue, d Desired, workers []string) ([]string, error) {
	var notOurs []string
	write := func(want client.Object, have client.Object, set func()) error {
		ours, err := r.writeOne(ctx, fq, want, have, set)
		if err == nil && !ours {
			notOurs = append(notOurs, fmt.Sprintf("%T %s", have, client.ObjectKeyFromObject(have)))
		}
		return err
	}
	keep := map[string]bool{}
	for i := range d.Flavors {
		want, have := &d.Flavors[i], &kueuev1beta2.ResourceFlavor{}
		keep["flavor/"+want.Name] = true
		if err := write(want, have, func() { have.Spec.NodeLabels = want.Spec.NodeLabels }); err != nil {
			return nil, err
		}
	}
	cohort := &kueuev1beta2.Cohort{}
	if err := write(&d.Cohort, cohort, func() { cohort.Spec.ResourceGroups = d.Cohort.Spec.ResourceGroups }); err != nil {
		return nil, err
	}
	for i := range d.ClusterQueues {
		want, have := &d.ClusterQueues[i], &kueuev1beta2.ClusterQueue{}
		keep["cq/"+want.Name] = true
		if err := write(want, have, func() {
			have.Spec.CohortName = want.Spec.CohortName
			have.Spec.NamespaceSelector = want.Spec.NamespaceSelector
			have.Spec.ResourceGroups = want.Spec.ResourceGroups
			have.Spec.FairSharing = want.Spec.FairSharing
			if have.Spec.Preemption == nil {
				have.Spec.Preemption = &kueuev1beta2.ClusterQueuePreemption{}
			}
			have.Spec.Preemption.ReclaimWithinCohort = want.Spec.Preemption.ReclaimWithinCohort
			have.Spec.Preemption.WithinClusterQueue = want.Spec.Preemption.WithinClusterQueue
			have.Spec.AdmissionChecksStrategy = want.Spec.AdmissionChecksStrategy
		}); err != nil {
			return nil, err
		}
	}
	for i := range d.LocalQueues {
		want, have := &d.LocalQueues[i], &kueuev1beta2.LocalQueue{}
		keep["lq/"+want.Namespace+"/"+want.Name] = true
		if err := write(want, have, func() { have.Spec.ClusterQueue = want.Spec.ClusterQueue }); err != nil {
			return nil, err
		}
	}
	works, err := r.applyWorkerQueues(ctx, fq, d.LocalQueues, workers, keep)
	if err != nil {
		return nil, err
	}
	return append(notOurs, works...), r.prune(ctx, fq, keep)
}

// writeOne creates want, or brings have (read under want's name) to it with set when it is the
// FleetQueue's; ours is false for an object of that name that is someone else's.
func (r *Reconciler) writeOne(ctx context.Context, fq *queuev1alpha1.FleetQueue, want, have client.Object, set func()) (ours bool, err error) {
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), have); apierrors.IsNotFound(err) {
		if err := controllerutil.SetControllerReference(fq, want, r.Client.Scheme()); err != nil {
			return true, err
		}
		if err := r.Client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return true, fmt.Errorf("creating %T %s for FleetQueue %s: %w", want, client.ObjectKeyFromObject(want), fq.Name, err)
		}
		return true, nil
	} else if err != nil {
		return true, err
	}
	if have.GetLabels()[FleetQueueLabel] != fq.Name || !metav1IsControlledBy(have, fq) {
		return false, nil
	}
	before := have.DeepCopyObject()
	set()
	if equality.Semantic.DeepEqual(before, have) {
		return true, nil
	}
	if err := r.Client.Update(ctx, have); err != nil {
		return true, fmt.Errorf("updating %T %s for FleetQueue %s: %w", have, client.ObjectKeyFromObject(have), fq.Name, err)
	}
	return true, nil
}

// prune deletes the FleetQueue's objects that keep does not name: the flavors of models the
// workers no longer have, the queues of teams removed from the spec, and the worker queues of
// clusters no longer among its workers.
func (r *Reconciler) prune(ctx context.Context, fq *queuev1alpha1.FleetQueue, keep map[string]bool) error {
	sel := client.MatchingLabels{FleetQueueLabel: fq.Name}
	var stale []client.Object
	flavors := &kueuev1beta2.ResourceFlavorList{}
	if err := r.Client.List(ctx, flavors, sel); err != nil {
		return err
	}
	for i := range flavors.Items {
		if !keep["flavor/"+flavors.Items[i].Name] {
			stale = append(stale, &flavors.Items[i])
		}
	}
	cqs := &kueuev1beta2.ClusterQueueList{}
	if err := r.Client.List(ctx, cqs, sel); err != nil {
		return err
	}
	for i := range cqs.Items {
		if !keep["cq/"+cqs.Items[i].Name] {
			stale = append(stale, &cqs.Items[i])
		}
	}
	lqs := &kueuev1beta2.LocalQueueList{}
	if err := r.Client.List(ctx, lqs, sel); err != nil {
		return err
	}
	for i := range lqs.Items {
		if !keep["lq/"+lqs.Items[i].Namespace+"/"+lqs.Items[i].Name] {
			stale = append(stale, &lqs.Items[i])
		}
	}
	works := &workv1.ManifestWorkList{}
	if err := r.Client.List(ctx, works, sel); err != nil {
		return err
	}
	for i := range works.Items {
		if !keep["work/"+works.Items[i].Namespace+"/"+works.Items[i].Name] {
			stale = append(stale, &works.Items[i])
		}
	}
	for _, o := range stale {
		if !metav1IsControlledBy(o, fq) {
			continue // labeled, but not made by the hub for this FleetQueue: never deleted
		}
		if err := r.Client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %T %s of FleetQueue %s: %w", o, client.ObjectKeyFromObject(o), fq.Name, err)
		}
	}
	return nil
}

// metav1IsControlledBy says whether o's controller is the FleetQueue (its UID, not only its
// name: a FleetQueue deleted and made again does not inherit the old one's objects until the
// garbage collector has removed them).
func metav1IsControlledBy(o client.Object, fq *queuev1alpha1.FleetQueue) bool {
	ref := metav1.GetControllerOf(o)
	return ref != nil && ref.UID == fq.UID
}
