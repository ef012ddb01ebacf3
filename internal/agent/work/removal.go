package work

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/core/workstatus"
)

// removeResource takes one resource the work applied off the spoke, as decideRemoval says: it
// deletes it (foreground, with its uid as precondition) or drops the work's ownerReference. It
// reports done when the resource is gone or released; a deleted resource with dependents is
// done only once the API server has removed it. It acts as user (applier.removeUser).
func (r *Reconciler) removeResource(ctx context.Context, user string, amw *workv1.AppliedManifestWork, res workv1.AppliedManifestResourceMeta, orphan bool) (bool, error) {
	gvr := schema.GroupVersionResource{Group: res.Group, Version: res.Version, Resource: res.Resource}
	dyn, err := r.applier.client(user)
	if err != nil {
		return false, err
	}
	ri := dyn.Resource(gvr).Namespace(res.Namespace)
	live, err := ri.Get(ctx, res.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	switch decideRemoval(live, res.UID, amw.UID, orphan) {
	case leave:
		return true, nil
	case release:
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"ownerReferences": withoutOwner(live.GetOwnerReferences(), amw.UID),
			"resourceVersion": live.GetResourceVersion(),
		}})
		if err != nil {
			return false, err
		}
		_, err = ri.Patch(ctx, res.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil, err
	}
	if live.GetDeletionTimestamp() == nil {
		uid := live.GetUID()
		foreground := metav1.DeletePropagationForeground
		err := ri.Delete(ctx, res.Name, metav1.DeleteOptions{PropagationPolicy: &foreground, Preconditions: &metav1.Preconditions{UID: &uid}})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return true, nil // gone, or replaced by another object
		}
		if err != nil {
			return false, fmt.Errorf("deleting %s %s/%s: %w", gvr, res.Namespace, res.Name, err)
		}
	}
	return false, nil
}

// ReasonDeleting is the reason of the work's Deleting condition while its resources go.
const ReasonDeleting = "ManifestWorkDeleting"

// deleting reports on the hub that the work waits for pending resources to be deleted.
func (r *Reconciler) deleting(ctx context.Context, work *workv1.ManifestWork, pending int) error {
	orig := work.DeepCopy()
	work.Status.Conditions = workstatus.Merge(work.Status.Conditions, []metav1.Condition{{
		Type: workv1.WorkDeleting, Status: metav1.ConditionTrue, Reason: ReasonDeleting, ObservedGeneration: work.Generation,
		Message: fmt.Sprintf("waiting for %d applied resources to be deleted from the cluster", pending),
	}}, metav1.NewTime(r.Clock.Now().Truncate(time.Second)))
	if !statusChanged(orig.Status, work.Status) {
		return nil
	}
	return client.IgnoreNotFound(r.Hub.Status().Patch(ctx, work, client.MergeFrom(orig)))
}

// finalize removes what a deleted work applied, as its deleteOption says, then its
// AppliedManifestWork, then the finalizer that held the work on the hub.
func (r *Reconciler) finalize(ctx context.Context, work *workv1.ManifestWork) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(work, Finalizer) {
		return ctrl.Result{}, nil
	}
	amw := &workv1.AppliedManifestWork{}
	err := r.Spoke.Get(ctx, client.ObjectKey{Name: AppliedName(r.HubHash, work.Name)}, amw)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	if err == nil {
		pending := 0
		for _, res := range amw.Status.AppliedResources {
			done, err := r.removeResource(ctx, r.applier.removeUser(work), amw, res, orphaned(work.Spec.DeleteOption, res))
			if err != nil {
				return ctrl.Result{}, err
			}
			if !done {
				pending++
			}
		}
		if pending > 0 {
			return ctrl.Result{RequeueAfter: crdRetry}, r.deleting(ctx, work, pending)
		}
		// Orphan: nothing may follow the AppliedManifestWork through the garbage collector.
		orphan := metav1.DeletePropagationOrphan
		if err := r.Spoke.Delete(ctx, amw, &client.DeleteOptions{PropagationPolicy: &orphan}); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
	}
	r.feedback.forget(client.ObjectKeyFromObject(work))
	controllerutil.RemoveFinalizer(work, Finalizer)
	return ctrl.Result{}, client.IgnoreNotFound(r.Hub.Update(ctx, work))
}
