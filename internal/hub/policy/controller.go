package policy

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	policyv1beta1 "github.com/flotilla/flotilla/api/policy/v1beta1"
	"github.com/flotilla/flotilla/internal/core/rollout"
	"github.com/flotilla/flotilla/internal/hub/delivery"
)

// Recorder emits events (events.k8s.io); the manager's GetEventRecorder gives one.
type Recorder interface {
	Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...interface{})
}

// ControllerName names the propagator and its events.
const ControllerName = "policy-propagator"

// Event reasons on root policies.
const (
	ReasonNameTooLong    = "ReplicatedNameTooLong"
	ReasonNotOwned       = "ReplicatedPolicyNotOwned"
	ReasonRolloutInvalid = "RolloutStrategyInvalid"
)

// rootIndex indexes Policies by the root their RootPolicyLabel names.
const rootIndex = "metadata.labels.root-policy"

// Reconciler propagates root policies to the clusters their PlacementBindings place them on and
// writes their status.
type Reconciler struct {
	// Client reads from the manager's cache and writes.
	Client client.Client
	// APIReader reads what hub templates name, uncached; the manager's when nil.
	APIReader client.Reader
	// Recorder emits events; the manager's is taken when nil.
	Recorder Recorder
	// MaxConcurrentReconciles bounds how many root policies are reconciled at once (default 4).
	MaxConcurrentReconciles int
	// Clock times rollouts; the real clock when nil.
	Clock clock.PassiveClock

	// series are the policies' policy_governance_info series.
	series series
	// hist is what the compliance histories last recorded.
	hist histories
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// SetupWithManager registers the reconciler, its index and its watches.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(ControllerName)
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	err := mgr.GetFieldIndexer().IndexField(context.Background(), &policyv1.Policy{}, rootIndex, func(o client.Object) []string {
		if root, ok := o.GetLabels()[policyv1.RootPolicyLabel]; ok {
			return []string{root}
		}
		return nil
	})
	if err != nil {
		return err
	}
	workers := r.MaxConcurrentReconciles
	if workers <= 0 {
		workers = 4
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		// A replicated policy's every change (its cluster's status) goes to its root; a root's
		// own status writes do not bring it back.
		Watches(&policyv1.Policy{}, handler.EnqueueRequestsFromMapFunc(forPolicy), builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool {
				return e.ObjectNew.GetLabels()[policyv1.RootPolicyLabel] != "" ||
					e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
					!reflect.DeepEqual(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels()) ||
					!reflect.DeepEqual(e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations())
			},
		})).
		Watches(&policyv1.PlacementBinding{}, handler.EnqueueRequestsFromMapFunc(r.rootsIn)).
		Watches(&policyv1beta1.PolicySet{}, handler.EnqueueRequestsFromMapFunc(r.rootsIn)).
		Watches(&clusterv1beta1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(r.rootsIn)).
		Watches(&clusterv1beta1.Placement{}, handler.EnqueueRequestsFromMapFunc(r.rootsIn)).
		// A placed cluster accepted again, or its namespace made anew, gets its policies.
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.rootsIn), builder.WithPredicates(delivery.Changed)).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.rootsIn), builder.WithPredicates(delivery.Changed)).
		Complete(r)
}

// forPolicy maps a replicated policy to its root and a root policy to itself.
func forPolicy(_ context.Context, o client.Object) []reconcile.Request {
	root, ok := o.GetLabels()[policyv1.RootPolicyLabel]
	if !ok {
		return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
	}
	// Namespaces hold no ".", so the first one ends the root's namespace.
	ns, name, found := strings.Cut(root, ".")
	if !found || ns == "" || name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}}
}

// rootsIn maps a binding, set, placement or decision to the root policies of its namespace (a
// cluster or namespace to every root policy): a namespace holds few policies, and a binding's or
// set's old subjects must be reconciled too.
func (r *Reconciler) rootsIn(ctx context.Context, o client.Object) []reconcile.Request {
	// Not the copies: a cluster's change would otherwise copy every copy in the fleet.
	opts := []client.ListOption{client.MatchingLabelsSelector{Selector: policyv1.RootSelector()}, client.UnsafeDisableDeepCopy}
	if o.GetNamespace() != "" {
		opts = append(opts, client.InNamespace(o.GetNamespace()))
	}
	l := &policyv1.PolicyList{}
	if err := r.Client.List(ctx, l, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing policies")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(l.Items))
	for i := range l.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&l.Items[i])})
	}
	return reqs
}

// +kubebuilder:rbac:groups=policy.open-cluster-management.io,resources=policies,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=policy.open-cluster-management.io,resources=policies/status,verbs=update;patch
// +kubebuilder:rbac:groups=policy.open-cluster-management.io,resources=placementbindings;policysets,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements;placementdecisions;managedclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups="";events.k8s.io,resources=events,verbs=create;patch;update

// Reconcile propagates one root policy, or removes the copies of one that is gone.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	rootName := policyv1.ReplicatedName(req.Namespace, req.Name)
	root := &policyv1.Policy{}
	if err := r.Client.Get(ctx, req.NamespacedName, root); apierrors.IsNotFound(err) {
		r.series.record(req.NamespacedName, nil)
		r.forgetHistory(req.NamespacedName)
		copies, err := r.copies(ctx, rootName)
		if err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{}, r.prune(ctx, copies, nil)
	} else if err != nil {
		return reconcile.Result{}, err
	}
	if isRoot, err := r.isRoot(ctx, root); err != nil || !isRoot {
		return reconcile.Result{}, err
	}
	if !root.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil // its copies go when it is gone
	}
	w, err := r.read(ctx, root.Namespace)
	if err != nil {
		return reconcile.Result{}, err
	}
	p := plan(root, w)
	if len(rootName) > policyv1.MaxReplicatedNameLength {
		r.Recorder.Eventf(root, nil, corev1.EventTypeWarning, ReasonNameTooLong, "Propagate",
			"the replicated name %s is %d characters, more than the %d a label value holds: no cluster gets Policy %s/%s; "+
				"shorten metadata.name (namespace and name together at most 62 characters)",
			rootName, len(rootName), policyv1.MaxReplicatedNameLength, root.Namespace, root.Name)
		p.clusters = map[string]bool{}
	}
	reported, recheck, errs := r.sync(ctx, root, p.clusters, w.groups)
	status := policyv1.PolicyStatus{Placement: p.placements, Status: clusterStatus(p.clusters, reported.states)}
	status.ComplianceState = rootCompliance(status.Status)
	errs = append(errs, r.writeStatus(ctx, root, status))
	if !root.Spec.Disabled {
		errs = append(errs, r.recordHistory(ctx, root, status.Status, reported.at))
	}
	if root.Spec.Disabled {
		r.series.record(req.NamespacedName, nil)
	} else {
		r.series.record(req.NamespacedName, &status)
	}
	res := reconcile.Result{RequeueAfter: recheck}
	if len(p.clusters) > 0 && hasHubTemplates(root) && (recheck == 0 || recheck > HubTemplateResync) {
		res.RequeueAfter = HubTemplateResync
	}
	return res, utilerrors.NewAggregate(errs)
}

func (r *Reconciler) clock() clock.PassiveClock {
	if r.Clock == nil {
		return clock.RealClock{}
	}
	return r.Clock
}

// isRoot reports whether p is a root policy: not a copy (RootPolicyLabel), and, as in OCM, not in
// a cluster's namespace, where only copies live. Flotilla leaves a hand-made policy there alone
// (OCM deletes it).
func (r *Reconciler) isRoot(ctx context.Context, p *policyv1.Policy) (bool, error) {
	if p.IsReplicated() {
		return false, nil
	}
	err := r.Client.Get(ctx, client.ObjectKey{Name: p.Namespace}, &clusterv1.ManagedCluster{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

// read gathers what a root policy in ns is placed by.
func (r *Reconciler) read(ctx context.Context, ns string) (world, error) {
	w := world{sets: map[string]*policyv1beta1.PolicySet{}, decided: map[string][]string{}, groups: map[string]rollout.GroupKey{}}
	bl := &policyv1.PlacementBindingList{}
	if err := r.Client.List(ctx, bl, client.InNamespace(ns)); err != nil {
		return w, err
	}
	w.bindings = bl.Items
	sl := &policyv1beta1.PolicySetList{}
	if err := r.Client.List(ctx, sl, client.InNamespace(ns)); err != nil {
		return w, err
	}
	for i := range sl.Items {
		w.sets[sl.Items[i].Name] = &sl.Items[i]
	}
	for _, b := range w.bindings {
		if _, done := w.decided[b.PlacementRef.Name]; done {
			continue
		}
		cs, found, err := placementClusters(ctx, r.Client, ns, b.PlacementRef)
		if err != nil {
			return w, err
		}
		if found {
			w.decided[b.PlacementRef.Name] = clusterNames(cs)
			for _, c := range cs {
				if _, ok := w.groups[c.Name]; !ok { // a cluster's group is the one of its first placement
					w.groups[c.Name] = c.Group
				}
			}
		}
	}
	return w, nil
}

// decidedClusters are the clusters the Placement ref names (in ns) decides; found is false for a
// missing Placement or OCM's PlacementRule, which decide nothing here.
func decidedClusters(ctx context.Context, c client.Reader, ns string, ref policyv1.PlacementSubject) (names []string, found bool, err error) {
	cs, found, err := placementClusters(ctx, c, ns, ref)
	return clusterNames(cs), found, err
}

func clusterNames(cs []rollout.Cluster) []string {
	names := make([]string, 0, len(cs))
	for _, cl := range cs {
		names = append(names, cl.Name)
	}
	return names
}

// placementClusters is decidedClusters with each cluster's decision group.
func placementClusters(ctx context.Context, c client.Reader, ns string, ref policyv1.PlacementSubject) (cs []rollout.Cluster, found bool, err error) {
	if !isPlacement(ref) {
		return nil, false, nil
	}
	err = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, &clusterv1beta1.Placement{})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	cs, err = rollout.PlacementClusters(ctx, c, ns, ref.Name)
	if err != nil {
		return nil, false, fmt.Errorf("placement %s/%s: %w", ns, ref.Name, err)
	}
	return cs, true, nil
}

// sync makes the hub's copies of root those of clusters (creating, updating, deleting) and
// returns what each placed cluster's copy reports, and how soon a rollout must be looked at
// again (0: no sooner than a change).
func (r *Reconciler) sync(ctx context.Context, root *policyv1.Policy, clusters map[string]bool, groups map[string]rollout.GroupKey) (reports, time.Duration, []error) {
	rootName := policyv1.ReplicatedName(root.Namespace, root.Name)
	existing, err := r.copies(ctx, rootName)
	if err != nil {
		return reports{}, 0, []error{err}
	}
	names := slices.Sorted(maps.Keys(clusters))
	var src *apiSource
	if hasHubTemplates(root) {
		src = newAPISource(r.APIReader)
	}
	// What each cluster's copy should be (nil: none goes there now), hub templates resolved.
	wants := make([]*policyv1.Policy, len(names))
	var mu sync.Mutex
	reported := reports{states: map[string]policyv1.ComplianceState{}, at: map[string]time.Time{}}
	var errs []error
	workqueue.ParallelizeUntil(ctx, writers, len(names), func(i int) {
		c := names[i]
		want, state, err := r.desired(ctx, root, rootName, c, clusters[c], existing[c], src)
		mu.Lock()
		defer mu.Unlock()
		wants[i] = want
		if err != nil {
			errs = append(errs, err)
		} else if state != nil {
			reported.states[c] = *state
			reported.at[c] = reportedAt(existing[c])
		}
	})
	var recheck time.Duration
	if rolls(root) {
		var err error
		if recheck, err = stageRollout(r.clock(), *root.Spec.RolloutStrategy, names, wants, existing, groups); err != nil {
			r.Recorder.Eventf(root, nil, corev1.EventTypeWarning, ReasonRolloutInvalid, "Propagate",
				"spec.rolloutStrategy: %v; fix it: meanwhile no cluster is turned to enforce", err)
		}
	}
	// The copies are written side by side: one root's edit reaches a thousand clusters at the API
	// server's pace, not at one request's latency after another's.
	workqueue.ParallelizeUntil(ctx, writers, len(names), func(i int) {
		if wants[i] == nil {
			return
		}
		if err := r.apply(ctx, wants[i], existing[names[i]]); err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	})
	return reported, recheck, append(errs, r.prune(ctx, existing, clusters))
}

// reports are what the placed clusters' copies report: their compliance, and when they last
// reported a new result.
type reports struct {
	states map[string]policyv1.ComplianceState
	at     map[string]time.Time
}

// copies are the policies labeled as rootName's copies, by namespace, as the cache holds them:
// read only (apply and prune copy what they write).
func (r *Reconciler) copies(ctx context.Context, rootName string) (map[string]*policyv1.Policy, error) {
	l := &policyv1.PolicyList{}
	if err := r.Client.List(ctx, l, client.MatchingFields{rootIndex: rootName}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	out := make(map[string]*policyv1.Policy, len(l.Items))
	for i := range l.Items {
		out[l.Items[i].Namespace] = &l.Items[i]
	}
	return out, nil
}

// writers is how many copies of one root the propagator writes at once.
const writers = 16

// desired is cluster c's copy of root, its hub templates resolved from src when it has any, or
// nil when none goes there now; and what the present copy reports (nil for none).
func (r *Reconciler) desired(ctx context.Context, root *policyv1.Policy, rootName, c string, enforce bool, cur *policyv1.Policy, src *apiSource) (*policyv1.Policy, *policyv1.ComplianceState, error) {
	if cur != nil && !owned(cur) {
		r.Recorder.Eventf(root, nil, corev1.EventTypeWarning, ReasonNotOwned, "Propagate",
			"Policy %s/%s exists and was not made by the hub (it lacks annotation %s): cluster %s gets no copy of Policy %s/%s; "+
				"delete or rename that policy", c, rootName, policyv1.RootPolicyUIDAnnotation, c, root.Namespace, root.Name)
		return nil, nil, nil
	}
	if why, err := delivery.Check(ctx, r.Client, c); err != nil {
		return nil, nil, err
	} else if why != nil {
		return nil, nil, nil // not accepted, leaving, or its namespace going: nothing new goes there
	}
	want := replica(root, c, enforce)
	if src != nil {
		r.resolveHubTemplates(ctx, root, want, c, src)
	}
	if cur == nil {
		return want, nil, nil
	}
	state := cur.Status.ComplianceState
	return want, &state, nil
}

// owned reports whether the hub made p: its copies carry their root's UID.
func owned(p *policyv1.Policy) bool { return p.Annotations[policyv1.RootPolicyUIDAnnotation] != "" }

// apply creates want, or updates cur to it when their spec, labels or annotations differ.
func (r *Reconciler) apply(ctx context.Context, want, cur *policyv1.Policy) error {
	if cur == nil {
		if err := r.Client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating Policy %s/%s: %w", want.Namespace, want.Name, err)
		}
		return nil
	}
	if sameCopy(cur, want) {
		return nil
	}
	next := cur.DeepCopy()
	next.Spec, next.Labels, next.Annotations = want.Spec, want.Labels, want.Annotations
	// A patch without a resourceVersion: the copy's spec is the hub's alone, while its cluster
	// writes the status meanwhile (an update would be refused as a Conflict, and the root
	// reconciled again, whenever a cluster reported between the cache's read and the write).
	if err := r.Client.Patch(ctx, next, client.MergeFrom(cur)); err != nil {
		return fmt.Errorf("updating Policy %s/%s: %w", next.Namespace, next.Name, err)
	}
	return nil
}

// prune deletes the hub's copies (of copies) on clusters not in keep.
func (r *Reconciler) prune(ctx context.Context, copies map[string]*policyv1.Policy, keep map[string]bool) error {
	var errs []error
	for ns, p := range copies {
		if _, placed := keep[ns]; placed || !owned(p) || !p.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Client.Delete(ctx, p.DeepCopy()); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting Policy %s/%s: %w", p.Namespace, p.Name, err))
		}
	}
	return utilerrors.NewAggregate(errs)
}

func (r *Reconciler) writeStatus(ctx context.Context, root *policyv1.Policy, st policyv1.PolicyStatus) error {
	if equality.Semantic.DeepEqual(root.Status, st) {
		return nil
	}
	next := root.DeepCopy()
	next.Status = st
	if err := r.Client.Status().Update(ctx, next); err != nil {
		return client.IgnoreNotFound(err)
	}
	return nil
}
