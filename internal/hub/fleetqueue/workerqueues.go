package fleetqueue

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	queuev1alpha1 "github.com/flotilla/flotilla/api/queue/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/contract/gpuflavor"
)

// WorkPrefix begins the name of the ManifestWork that brings a FleetQueue's team queues to each
// worker: "fleetqueue-" and the FleetQueue's name (unique among FleetQueues).
const WorkPrefix = "fleetqueue-"

// WorkerQueues is the ManifestWork, in the worker's namespace on the hub, that makes on the
// worker what MultiKueue needs there to run the teams' jobs: each team's namespace and a
// LocalQueue of the hub LocalQueue's name in it, on the worker's ClusterQueue (the kueue-queues
// add-on's, gpuflavor.WorkerClusterQueue). Each object is created only when it is missing and
// never changed (CreateOnly): a namespace or LocalQueue the worker already has stays as it is
// and is not the work's, so removing the work never deletes it. A namespace the work made is
// left behind when the work goes (it may hold what the team put there); the LocalQueues it made
// go with it.
func WorkerQueues(fq *queuev1alpha1.FleetQueue, localQueues []kueuev1beta2.LocalQueue, worker string) (*workv1.ManifestWork, error) {
	w := &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: worker, Name: WorkPrefix + fq.Name, Labels: map[string]string{FleetQueueLabel: fq.Name}},
		Spec:       workv1.ManifestWorkSpec{DeleteOption: &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan, SelectivelyOrphans: &workv1.SelectivelyOrphan{}}},
	}
	add := func(obj runtime.Object, id workv1.ResourceIdentifier) error {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		raw, err := json.Marshal(u) // keys sorted, as the API server gives them back
		if err != nil {
			return err
		}
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
		w.Spec.ManifestConfigs = append(w.Spec.ManifestConfigs, workv1.ManifestConfigOption{ResourceIdentifier: id,
			FeedbackScrapeType: workv1.FeedbackPollType, UpdateStrategy: &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeCreateOnly}})
		return nil
	}
	var namespaces []string
	for _, lq := range localQueues {
		if slices.Contains(namespaces, lq.Namespace) {
			continue
		}
		namespaces = append(namespaces, lq.Namespace)
		ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: lq.Namespace}}
		if err := add(ns, workv1.ResourceIdentifier{Resource: "namespaces", Name: lq.Namespace}); err != nil {
			return nil, err
		}
		w.Spec.DeleteOption.SelectivelyOrphans.OrphaningRules = append(w.Spec.DeleteOption.SelectivelyOrphans.OrphaningRules,
			workv1.OrphaningRule{Resource: "namespaces", Name: lq.Namespace})
	}
	for _, lq := range localQueues {
		on := &kueuev1beta2.LocalQueue{TypeMeta: metav1.TypeMeta{APIVersion: kueuev1beta2.GroupVersion.String(), Kind: "LocalQueue"},
			ObjectMeta: metav1.ObjectMeta{Namespace: lq.Namespace, Name: lq.Name},
			Spec:       kueuev1beta2.LocalQueueSpec{ClusterQueue: gpuflavor.WorkerClusterQueue}}
		if err := add(on, workv1.ResourceIdentifier{Group: kueuev1beta2.GroupVersion.Group, Resource: "localqueues", Namespace: lq.Namespace, Name: lq.Name}); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=get;list;watch;create;update;delete

// applyWorkerQueues writes the FleetQueue's WorkerQueues work to each worker and names each in
// keep, so that prune deletes the works of clusters no longer among them. It returns the works
// of the needed name that are someone else's, which it leaves alone.
func (r *Reconciler) applyWorkerQueues(ctx context.Context, fq *queuev1alpha1.FleetQueue, localQueues []kueuev1beta2.LocalQueue, workers []string, keep map[string]bool) ([]string, error) {
	var notOurs []string
	for _, worker := range workers {
		want, err := WorkerQueues(fq, localQueues, worker)
		if err != nil {
			return nil, err
		}
		keep["work/"+worker+"/"+want.Name] = true
		have := &workv1.ManifestWork{}
		ours, err := r.writeOne(ctx, fq, want, have, func() {
			if !workv1.SameSpec(&have.Spec, &want.Spec) {
				have.Spec = want.Spec
			}
		})
		if err != nil {
			return nil, err
		}
		if !ours {
			notOurs = append(notOurs, fmt.Sprintf("ManifestWork %s/%s", worker, want.Name))
		}
	}
	return notOurs, nil
}
