package addon

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
)

// The labels OCM's hub puts on a ManagedCluster for each of its add-ons (OCM's
// addOnFeatureDiscoveryController): FeatureLabelPrefix + the add-on's name, with one of the
// three values below. Placements written for OCM select clusters by them.
const (
	FeatureLabelPrefix = "feature.open-cluster-management.io/addon-"
	// FeatureAvailable: the add-on's Available condition is True.
	FeatureAvailable = "available"
	// FeatureUnhealthy: it is False.
	FeatureUnhealthy = "unhealthy"
	// FeatureUnreachable: it is Unknown, or nobody has reported it yet.
	FeatureUnreachable = "unreachable"
)

// FeatureLabelValue is the value of an add-on's feature label on its cluster, as OCM computes
// it from the add-on's Available condition.
func FeatureLabelValue(mca *addonv1alpha1.ManagedClusterAddOn) string {
	c := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable)
	switch {
	case c == nil:
		return FeatureUnreachable
	case c.Status == metav1.ConditionTrue:
		return FeatureAvailable
	case c.Status == metav1.ConditionFalse:
		return FeatureUnhealthy
	}
	return FeatureUnreachable
}

// featureLabelChanges is what must change in a cluster's labels so that they carry exactly one
// feature label per add-on of the cluster that is not being deleted: a value to set, or nil to
// remove a feature label whose add-on is gone. Other labels are never in it.
func featureLabelChanges(labels map[string]string, addons []addonv1alpha1.ManagedClusterAddOn) map[string]*string {
	want := map[string]string{}
	for i := range addons {
		if a := &addons[i]; a.DeletionTimestamp.IsZero() {
			want[FeatureLabelPrefix+a.Name] = FeatureLabelValue(a)
		}
	}
	out := map[string]*string{}
	for k, v := range want {
		if have, ok := labels[k]; !ok || have != v {
			out[k] = &v
		}
	}
	for k := range labels {
		if _, ok := want[k]; !ok && strings.HasPrefix(k, FeatureLabelPrefix) {
			out[k] = nil
		}
	}
	return out
}

// FeatureLabelReconciler keeps the add-on feature labels of each ManagedCluster, as OCM's hub
// does. It writes nothing else: its patches carry only those labels. Requests are cluster names.
type FeatureLabelReconciler struct {
	Client client.Client
}

var _ reconcile.Reconciler = (*FeatureLabelReconciler)(nil)

// SetupWithManager registers the controller: a cluster is looked at again when its labels, its
// Available condition or its deletion change, and when one of its add-ons comes, goes or
// changes its Available condition.
func (r *FeatureLabelReconciler) SetupWithManager(mgr ctrl.Manager) error {
	clusterChanged := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld.(*clusterv1.ManagedCluster), e.ObjectNew.(*clusterv1.ManagedCluster)
		return !maps.Equal(o.Labels, n.Labels) || o.DeletionTimestamp.IsZero() != n.DeletionTimestamp.IsZero() ||
			(findAvailable(o) == nil) != (findAvailable(n) == nil)
	}}
	addonChanged := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld.(*addonv1alpha1.ManagedClusterAddOn), e.ObjectNew.(*addonv1alpha1.ManagedClusterAddOn)
		return FeatureLabelValue(o) != FeatureLabelValue(n) || o.DeletionTimestamp.IsZero() != n.DeletionTimestamp.IsZero()
	}}
	return ctrl.NewControllerManagedBy(mgr).
		Named("addon-feature-labels").
		For(&clusterv1.ManagedCluster{}, builder.WithPredicates(clusterChanged)).
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetNamespace()}}}
		}), builder.WithPredicates(addonChanged)).
		Complete(r)
}

func findAvailable(c *clusterv1.ManagedCluster) *metav1.Condition {
	return meta.FindStatusCondition(c.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
}

// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons,verbs=get;list;watch

// Reconcile brings one cluster's feature labels in line with its add-ons. As in OCM, a cluster
// being deleted, or one whose agent has not reported yet (no Available condition), is left as it
// is.
func (r *FeatureLabelReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cluster := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !cluster.DeletionTimestamp.IsZero() || findAvailable(cluster) == nil {
		return reconcile.Result{}, nil
	}
	list := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.Client.List(ctx, list, client.InNamespace(cluster.Name)); err != nil {
		return reconcile.Result{}, err
	}
	changes := featureLabelChanges(cluster.Labels, list.Items)
	if len(changes) == 0 {
		return reconcile.Result{}, nil
	}
	// A merge patch of these keys alone: labels that others write (the cluster-set label, the
	// administrator's) are not in it, so it cannot undo a change made meanwhile.
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": changes}})
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := r.Client.Patch(ctx, cluster, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("setting the add-on feature labels %s of ManagedCluster %s: %w",
			strings.Join(slices.Sorted(maps.Keys(changes)), ", "), cluster.Name, err))
	}
	return reconcile.Result{}, nil
}
