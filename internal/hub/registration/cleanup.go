package registration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
)

// A denied or deleted cluster's namespace is emptied in OCM's order before the agent loses its
// access: first its ManagedClusterAddOns are deleted (an add-on's manager may still need a work,
// its pre-delete hook, while its add-on goes), then its ManifestWorks. Every work carries the work
// agent's finalizer, which only the agent removes, once it has removed from its cluster what the
// work applied; so until no work holds that finalizer the agent keeps, in the namespace, the
// access to ManifestWorks it needs and nothing more. Only then does the hub delete the agent's
// RoleBinding and the namespace, and the cluster's name can be registered again.
//
// An agent that never comes back would hold the namespace for ever: after the cleanup timeout the
// hub removes the work agent's finalizer (that one, no other) from the works that still carry it,
// and says so in the cluster's conditions, since what those works applied may stay on the cluster.

// DefaultCleanupTimeout is how long the hub waits, from a cluster's denial or deletion, for its
// agent to remove what the cluster's ManifestWorks applied, before it removes the works'
// finalizers itself. A connected agent needs seconds; the bound is for an agent that is gone.
const DefaultCleanupTimeout = 5 * time.Minute

// AccessFinalizer holds the agent's Role and RoleBinding in the cluster's namespace while
// ManifestWorks there still carry the work agent's finalizer: whoever deletes the namespace (or
// the ManagedCluster, in the foreground) cannot take away the access the agent needs to remove
// it. OCM puts the same finalizer on its work agent's RoleBinding.
const AccessFinalizer = workv1.ManifestWorkFinalizer

// ReasonCleanupForced is the reason of the Deleting condition of a deleted cluster whose works'
// finalizers the hub removed after the timeout.
const ReasonCleanupForced = "ResourceCleanupForced"

// forcedMarker is in the message of a cleanup the hub forced.
const forcedMarker = "the hub removed their finalizer"

// cleanupItem is an add-on or a work in the cluster's namespace, as the cleanup judges it.
type cleanupItem struct {
	Name     string
	Deleting bool
	// Held: a work that carries the work agent's finalizer.
	Held bool
}

// cleanupPlan is what the hub does in a denied or deleted cluster's namespace in one pass.
type cleanupPlan struct {
	DeleteAddons, DeleteWorks []string
	// Release lists the works whose agent finalizer the hub removes (the timeout has passed).
	Release []string
	// Done: no work holds the agent's finalizer after this pass; the agent's access and the
	// namespace may go.
	Done bool
	// RequeueAfter is when the timeout passes, while not done.
	RequeueAfter time.Duration
	// Message says what the hub waits for, or what it forced; empty when there was nothing to do.
	Message string
}

// planCleanup decides one pass of the cleanup of a namespace holding addons and works, for a
// cluster denied or deleted at since; the hub forces the works' release at since+timeout.
func planCleanup(addons, works []cleanupItem, since, now time.Time, timeout time.Duration) cleanupPlan {
	deadline := since.Add(timeout)
	expired := !now.Before(deadline)
	var p cleanupPlan
	var addonNames, held []string
	for _, a := range addons {
		addonNames = append(addonNames, a.Name)
		if !a.Deleting {
			p.DeleteAddons = append(p.DeleteAddons, a.Name)
		}
	}
	// After the timeout an add-on that is still there (held by its own manager's finalizer, not
	// the hub's to remove) no longer holds up its cluster's works.
	addonsFirst := len(addons) > 0 && !expired
	for _, w := range works {
		if !addonsFirst && !w.Deleting {
			p.DeleteWorks = append(p.DeleteWorks, w.Name)
		}
		if w.Held {
			held = append(held, w.Name)
		}
	}
	slices.Sort(p.DeleteAddons)
	slices.Sort(p.DeleteWorks)
	slices.Sort(held)
	slices.Sort(addonNames)
	when := "at " + deadline.UTC().Format(time.RFC3339) + " (the cleanup timeout) the hub removes the finalizer " +
		workv1.ManifestWorkFinalizer + " of the works still left"
	switch {
	case addonsFirst:
		p.Message = fmt.Sprintf("waiting for %s to be deleted before the cluster's ManifestWorks; %s",
			count(addonNames, "ManagedClusterAddOn"), when)
	case len(held) > 0 && expired:
		p.Release, p.Done = held, true
		p.Message = fmt.Sprintf("the agent did not remove what %s applied within %s: "+forcedMarker+" %s, "+
			"so what they applied may remain on the cluster; remove it there by hand", count(held, "ManifestWork"), timeout, workv1.ManifestWorkFinalizer)
	case len(held) > 0:
		p.Message = fmt.Sprintf("waiting for the agent to remove from the cluster what %s applied; %s", count(held, "ManifestWork"), when)
	default:
		p.Done = true
	}
	if !p.Done {
		p.RequeueAfter = deadline.Sub(now)
	}
	return p
}

// count is "2 ManifestWorks (a, b)", naming at most five.
func count(names []string, kind string) string {
	const most = 5
	shown := names
	more := ""
	if len(names) > most {
		shown, more = names[:most], fmt.Sprintf(" and %d more", len(names)-most)
	}
	if len(names) != 1 {
		kind += "s"
	}
	return fmt.Sprintf("%d %s (%s%s)", len(names), kind, strings.Join(shown, ", "), more)
}

// cleanUp carries out one pass of the cleanup of mc's namespace, denied or deleted at since. A
// namespace that is not the hub's, or is gone, holds nothing the hub cleans up.
func (r *ManagedClusterReconciler) cleanUp(ctx context.Context, mc *clusterv1.ManagedCluster, since time.Time) (cleanupPlan, error) {
	ns := &corev1.Namespace{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: mc.Name}, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return cleanupPlan{Done: true}, nil
		}
		return cleanupPlan{}, fmt.Errorf("reading namespace %s: %w", mc.Name, err)
	}
	if !ownedBy(ns, mc) {
		return cleanupPlan{Done: true}, nil
	}
	addons := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.Client.List(ctx, addons, client.InNamespace(mc.Name)); err != nil {
		return cleanupPlan{}, fmt.Errorf("listing the ManagedClusterAddOns of cluster %s: %w", mc.Name, err)
	}
	works := &workv1.ManifestWorkList{}
	if err := r.Client.List(ctx, works, client.InNamespace(mc.Name)); err != nil {
		return cleanupPlan{}, fmt.Errorf("listing the ManifestWorks of cluster %s: %w", mc.Name, err)
	}
	var addonItems, workItems []cleanupItem
	byName := map[string]client.Object{}
	for i := range addons.Items {
		a := &addons.Items[i]
		addonItems = append(addonItems, cleanupItem{Name: a.Name, Deleting: !a.DeletionTimestamp.IsZero()})
		byName["addon/"+a.Name] = a
	}
	for i := range works.Items {
		w := &works.Items[i]
		workItems = append(workItems, cleanupItem{Name: w.Name, Deleting: !w.DeletionTimestamp.IsZero(),
			Held: controllerutil.ContainsFinalizer(w, workv1.ManifestWorkFinalizer)})
		byName["work/"+w.Name] = w
	}
	p := planCleanup(addonItems, workItems, since, r.Clock.Now(), r.cleanupTimeout())
	if !p.Done {
		if err := r.keepWorkAccess(ctx, mc, ns); err != nil {
			return p, err
		}
	}
	for _, key := range append(prefixed("addon/", p.DeleteAddons), prefixed("work/", p.DeleteWorks)...) {
		obj := byName[key]
		uid := obj.GetUID()
		if err := r.Client.Delete(ctx, obj, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return p, fmt.Errorf("deleting %s in namespace %s: %w", key, mc.Name, err)
		}
	}
	for _, name := range p.Release {
		w := byName["work/"+name].(*workv1.ManifestWork)
		orig := w.DeepCopy()
		controllerutil.RemoveFinalizer(w, workv1.ManifestWorkFinalizer)
		err := r.Client.Patch(ctx, w, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
		if client.IgnoreNotFound(err) != nil {
			return p, fmt.Errorf("removing the finalizer %s of ManifestWork %s/%s: %w", workv1.ManifestWorkFinalizer, mc.Name, name, err)
		}
	}
	if len(p.Release) > 0 {
		// Said once, when it happens; the condition keeps it.
		ctrl.LoggerFrom(ctx).Info("the cleanup timeout passed: removed the work agent's finalizer from the cluster's remaining works",
			"cluster", mc.Name, "works", p.Release, "timeout", r.cleanupTimeout())
	}
	return p, nil
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, prefix+n)
	}
	return out
}

func (r *ManagedClusterReconciler) cleanupTimeout() time.Duration {
	if r.CleanupTimeout > 0 {
		return r.CleanupTimeout
	}
	return DefaultCleanupTimeout
}

// keepWorkAccess leaves the agent of a denied or deleted cluster, in its namespace, only what it
// needs to finish its works' removal: its Role holds the ManifestWork rules alone, and Role and
// RoleBinding carry AccessFinalizer. A binding deleted by mistake is made again, unless the
// namespace is terminating (nothing can be created there).
func (r *ManagedClusterReconciler) keepWorkAccess(ctx context.Context, mc *clusterv1.ManagedCluster, ns *corev1.Namespace) error {
	name := clusteridentity.RoleName(mc.Name)
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: mc.Name}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: mc.Name}}
	create := ns.DeletionTimestamp.IsZero()
	if err := keepOwned(ctx, r.Client, mc, role, create, func() {
		role.Rules = workCleanupRules()
		controllerutil.AddFinalizer(role, AccessFinalizer)
	}); err != nil {
		return err
	}
	return keepOwned(ctx, r.Client, mc, binding, create, func() {
		binding.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}
		binding.Subjects = groupSubject(mc.Name)
		controllerutil.AddFinalizer(binding, AccessFinalizer)
	})
}

// keepOwned is ensureOwned where create is true; otherwise it only updates obj if it exists and is
// mc's. An object that is someone else's is left alone either way.
func keepOwned(ctx context.Context, c client.Client, mc *clusterv1.ManagedCluster, obj client.Object, create bool, mutate func()) error {
	if create {
		err := ensureOwned(ctx, c, mc, obj, mutate)
		if no := (*notOwnedError)(nil); errors.As(err, &no) {
			return nil
		}
		return err
	}
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s %s/%s: %w", kindOf(c, obj), obj.GetNamespace(), obj.GetName(), err)
	}
	if !ownedBy(obj, mc) {
		return nil
	}
	before := obj.DeepCopyObject()
	mutate()
	if equality.Semantic.DeepEqual(before, obj) {
		return nil
	}
	return c.Update(ctx, obj)
}

// releaseAccess removes AccessFinalizer from the agent's Role and RoleBinding, so that the
// deletion of the binding and the namespace can complete: no work holds the agent any more.
func (r *ManagedClusterReconciler) releaseAccess(ctx context.Context, mc *clusterv1.ManagedCluster) error {
	name := clusteridentity.RoleName(mc.Name)
	for _, obj := range []client.Object{
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: mc.Name}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: mc.Name}},
	} {
		err := keepOwned(ctx, r.Client, mc, obj, false, func() { controllerutil.RemoveFinalizer(obj, AccessFinalizer) })
		if client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}
