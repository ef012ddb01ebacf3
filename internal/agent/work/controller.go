package work

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// Finalizer holds a ManifestWork on the hub until the agent has removed what it applied. The
// hub's registration controller knows it too (it removes it from the works of a denied or deleted
// cluster whose agent did not): both take it from the API package.
const Finalizer = workv1.ManifestWorkFinalizer

// crdRetry is how soon a work waiting for a CRD, or for its objects to be deleted, is looked at again.
const crdRetry = time.Second

// Reconciler applies the ManifestWorks of one cluster's namespace on the hub to the spoke.
type Reconciler struct {
	// Hub reads and writes the cluster's ManifestWorks with the agent's hub identity.
	Hub client.Client
	// Spoke reads and writes AppliedManifestWorks with the agent's spoke identity.
	Spoke   client.Client
	applier *applier
	// HubHash names the hub on the spoke (HubHash).
	HubHash string
	AgentID string
	// Resync is how often a work is looked at again without an event, for status feedback.
	Resync time.Duration
	Clock  clock.PassiveClock
	// feedback tracks the applied objects to watch; nil when none are watched.
	feedback *watcher
	// rounds remembers the works applied in full (round).
	rounds rounds
	Log    logr.Logger
	// Fence holds back fenced works while raised; nil for none. HubReader reads works past the
	// cache after a fence (fenceGate).
	Fence     Fence
	HubReader client.Reader
	verified  verified
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// Reconcile applies one work, removes what it no longer applies, and writes its status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	work := &workv1.ManifestWork{}
	if err := r.Hub.Get(ctx, req.NamespacedName, work); err != nil {
		if apierrors.IsNotFound(err) {
			r.rounds.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !work.DeletionTimestamp.IsZero() {
		r.rounds.forget(req.NamespacedName)
		return r.finalize(ctx, work)
	}
	if !controllerutil.ContainsFinalizer(work, Finalizer) {
		orig := work.DeepCopy()
		controllerutil.AddFinalizer(work, Finalizer)
		if err := r.Hub.Patch(ctx, work, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, err
		}
	}
	if wait, err := r.fenceGate(ctx, work); wait || err != nil {
		return ctrl.Result{RequeueAfter: time.Second}, err
	}
	if expired, _ := ttlExpired(work, r.Clock.Now()); expired {
		r.Log.Info("deleting a finished work: ttlSecondsAfterFinished has passed", "work", req.NamespacedName)
		return ctrl.Result{}, client.IgnoreNotFound(r.Hub.Delete(ctx, work))
	}
	outcomes, retry, err := r.round(ctx, work)
	if err != nil {
		return ctrl.Result{}, err
	}
	r.feedback.track(req.NamespacedName, outcomes)
	st := workStatus(work.Status, outcomes, work.Generation, r.Clock.Now())
	if statusChanged(work.Status, st) {
		// The status is the agent's alone: a patch of what changed, on whatever version the hub has.
		orig := work.DeepCopy()
		work.Status = st
		if err := r.Hub.Status().Patch(ctx, work, client.MergeFrom(orig)); err != nil {
			return ctrl.Result{}, err
		}
	}
	if t := transientFailures(outcomes); len(t) > 0 {
		// Tried again with the controller's backoff, however long the resync.
		return ctrl.Result{}, fmt.Errorf("work %s/%s: manifests %v failed for a reason that passes (the cluster's API server did not answer or was busy); trying again", work.Namespace, work.Name, t)
	}
	next := r.Resync
	if retry {
		next = crdRetry
	}
	if _, after := ttlExpired(work, r.Clock.Now()); after > 0 && after < next {
		next = after
	}
	return ctrl.Result{RequeueAfter: next}, nil
}

// transientFailures returns the ordinals of the manifests that failed for a reason that passes.
func transientFailures(outcomes []outcome) []int32 {
	var out []int32
	for _, o := range outcomes {
		if o.Transient {
			out = append(out, o.Meta.Ordinal)
		}
	}
	return out
}

// ttlExpired reports whether a work that has been Complete for ttlSecondsAfterFinished should
// go, or else how long until it should (0 when it is not set or the work is not Complete).
func ttlExpired(work *workv1.ManifestWork, now time.Time) (bool, time.Duration) {
	if work.Spec.DeleteOption == nil || work.Spec.DeleteOption.TTLSecondsAfterFinished == nil {
		return false, 0
	}
	c := meta.FindStatusCondition(work.Status.Conditions, workv1.WorkComplete)
	if c == nil || c.Status != metav1.ConditionTrue {
		return false, 0
	}
	at := c.LastTransitionTime.Add(time.Duration(*work.Spec.DeleteOption.TTLSecondsAfterFinished) * time.Second)
	if !now.Before(at) {
		return true, 0
	}
	return false, at.Sub(now)
}

// round applies the work and returns its manifests' outcomes, and whether some wait for a CRD.
// A work whose generation the agent has applied in full before gets a cached round first
// (step.cached): reads from the spoke API server's cache and no writes, which is what a resync
// of an unchanged work needs. Anything the cached round cannot settle, an object missing or
// different, or an applied-resources record that would change, makes it a full round.
func (r *Reconciler) round(ctx context.Context, work *workv1.ManifestWork) ([]outcome, bool, error) {
	key := client.ObjectKeyFromObject(work)
	if amw := r.rounds.applied(key, work.Generation); amw != nil {
		outcomes, _ := r.applyAll(ctx, work, amw, true)
		if settled(amw, outcomes) {
			return outcomes, false, nil
		}
	}
	r.rounds.forget(key)
	amw, err := r.ensureApplied(ctx, work)
	if err != nil {
		return nil, false, err
	}
	outcomes, retry := r.applyAll(ctx, work, amw, false)
	if err := r.record(ctx, work, amw, outcomes); err != nil {
		return nil, false, err
	}
	if !retry && len(transientFailures(outcomes)) == 0 {
		r.rounds.remember(key, work.Generation, amw)
	}
	return outcomes, retry, nil
}

// settled reports whether a cached round found everything as the last full round left it.
func settled(amw *workv1.AppliedManifestWork, outcomes []outcome) bool {
	for _, o := range outcomes {
		if o.Stale || o.Transient || o.Retry {
			return false
		}
	}
	record, stale := nextApplied(amw.Status.AppliedResources, appliedRecords(outcomes), inWork(outcomes))
	return len(stale) == 0 && equality.Semantic.DeepEqual(record, amw.Status.AppliedResources)
}

// ensureApplied gets or creates the work's AppliedManifestWork.
func (r *Reconciler) ensureApplied(ctx context.Context, work *workv1.ManifestWork) (*workv1.AppliedManifestWork, error) {
	amw := &workv1.AppliedManifestWork{}
	name := AppliedName(r.HubHash, work.Name)
	err := r.Spoke.Get(ctx, client.ObjectKey{Name: name}, amw)
	if apierrors.IsNotFound(err) {
		amw = &workv1.AppliedManifestWork{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       workv1.AppliedManifestWorkSpec{HubHash: r.HubHash, AgentID: r.AgentID, ManifestWorkName: work.Name},
		}
		err = r.Spoke.Create(ctx, amw)
	}
	if err != nil {
		return nil, fmt.Errorf("AppliedManifestWork %s on the spoke: %w", name, err)
	}
	return amw, nil
}

// applyAll applies the work's manifests in order and returns their outcomes in manifest order,
// and whether some wait for a CRD.
func (r *Reconciler) applyAll(ctx context.Context, work *workv1.ManifestWork, amw *workv1.AppliedManifestWork, cached bool) ([]outcome, bool) {
	ms := decode(work.Spec.Workload.Manifests)
	markFenced(work, ms)
	outcomes := make([]outcome, len(ms))
	crds := map[schema.GroupKind]bool{}
	user := r.applier.applyUser(work)
	retry := false
	for _, m := range applyOrder(ms) {
		o := r.applier.apply(ctx, applyRequest{
			Manifest: m, Configs: work.Spec.ManifestConfigs, User: user,
			Owner: amw.UID, OwnerName: amw.Name, HubHash: r.HubHash, CRDs: crds, Cached: cached,
		})
		if gk, ok := crdKind(m); ok {
			crds[gk] = !established(o.Live)
		}
		retry = retry || o.Retry
		outcomes[m.Ordinal] = o
	}
	return outcomes, retry
}

// crdKind returns the kind a CRD manifest defines.
func crdKind(m manifest) (schema.GroupKind, bool) {
	if rank(m) != 1 {
		return schema.GroupKind{}, false
	}
	g, _, _ := unstructured.NestedString(m.Obj.Object, "spec", "group")
	k, _, _ := unstructured.NestedString(m.Obj.Object, "spec", "names", "kind")
	return schema.GroupKind{Group: g, Kind: k}, g != "" && k != ""
}

func established(live *unstructured.Unstructured) bool {
	if live == nil {
		return false
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(live.Object, crd); err != nil {
		return false
	}
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// record keeps the AppliedManifestWork's list of applied resources and removes the resources
// the work no longer has.
func (r *Reconciler) record(ctx context.Context, work *workv1.ManifestWork, amw *workv1.AppliedManifestWork, outcomes []outcome) error {
	record, stale := nextApplied(amw.Status.AppliedResources, appliedRecords(outcomes), inWork(outcomes))
	var errs []error
	for _, res := range stale {
		done, err := r.removeResource(ctx, r.applier.removeUser(work), amw, res, orphaned(work.Spec.DeleteOption, res))
		if err != nil {
			errs = append(errs, err)
		}
		if err != nil || !done {
			record = append(record, res) // try again next round
		}
	}
	if !equality.Semantic.DeepEqual(record, amw.Status.AppliedResources) {
		amw.Status.AppliedResources = record
		if err := r.Spoke.Status().Update(ctx, amw); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("removing resources work %s/%s no longer has: %v", work.Namespace, work.Name, errs)
	}
	return nil
}

// appliedRecords returns the resources of the outcomes that are the work's to remove later.
func appliedRecords(outcomes []outcome) []workv1.AppliedManifestResourceMeta {
	var applied []workv1.AppliedManifestResourceMeta
	for _, o := range outcomes {
		if o.Record != nil {
			applied = append(applied, *o.Record)
		}
	}
	return applied
}

// inWork returns the resources the work's manifests name.
func inWork(outcomes []outcome) map[resourceKey]bool {
	in := map[resourceKey]bool{}
	for _, o := range outcomes {
		if o.Meta.Resource != "" {
			in[resourceKey{o.Meta.Group, o.Meta.Resource, o.Meta.Namespace, o.Meta.Name}] = true
		}
	}
	return in
}
