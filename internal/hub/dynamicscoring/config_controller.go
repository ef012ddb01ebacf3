package dynamicscoring

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	dsv1alpha1 "github.com/flotilla/flotilla/api/dynamicscoring/v1alpha1"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
	"github.com/flotilla/flotilla/internal/contract/scoringwire"
)

// ConfigReconciler writes, in the namespace of each cluster whose ManagedClusterAddOn
// dynamic-scoring exists, the ConfigMap dynamic-scoring-config that lists the scorers its agent
// runs. A request is a cluster namespace.
type ConfigReconciler struct {
	Client client.Client
	// Namespace is the only namespace whose DynamicScorers and DynamicScoringConfigs count
	// (DefaultNamespace when ""), as ScorerReconciler's.
	Namespace string
	// Recorder emits events; the manager's is taken when nil.
	Recorder Recorder
}

var _ reconcile.Reconciler = (*ConfigReconciler)(nil)

// SetupWithManager registers the controller: it runs for the add-on's ManagedClusterAddOns and
// the hub's ConfigMaps, and for every such cluster when a DynamicScorer or a
// DynamicScoringConfig changes.
func (r *ConfigReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(ControllerName)
	}
	named := func(name string) predicate.Predicate {
		return predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == name })
	}
	byNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetNamespace()}}}
	})
	all := handler.EnqueueRequestsFromMapFunc(r.allClusters)
	return ctrl.NewControllerManagedBy(mgr).Named("dynamicscoring-config").
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, byNamespace, builder.WithPredicates(named(scoringwire.Name))).
		Watches(&corev1.ConfigMap{}, byNamespace, builder.WithPredicates(named(scoringwire.ConfigMapName))).
		Watches(&dsv1alpha1.DynamicScorer{}, all).
		Watches(&dsv1alpha1.DynamicScoringConfig{}, all).
		Complete(r)
}

// allClusters is every cluster with the add-on.
func (r *ConfigReconciler) allClusters(ctx context.Context, _ client.Object) []reconcile.Request {
	l := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.Client.List(ctx, l); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the ManagedClusterAddOns of dynamic scoring")
		return nil
	}
	var out []reconcile.Request
	for _, a := range l.Items {
		if a.Name == scoringwire.Name {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: a.Namespace}})
		}
	}
	return out
}

// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons,verbs=get;list;watch
// +kubebuilder:rbac:groups=dynamic-scoring.open-cluster-management.io,resources=dynamicscorers;dynamicscoringconfigs,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;delete

// Reconcile makes the cluster's ConfigMap list its scorers, or deletes it when the add-on is off.
func (r *ConfigReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cluster := req.Name
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: scoringwire.Name}, mca)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	key := client.ObjectKey{Namespace: cluster, Name: scoringwire.ConfigMapName}
	cm := &corev1.ConfigMap{}
	cmErr := r.Client.Get(ctx, key, cm)
	if cmErr != nil && !apierrors.IsNotFound(cmErr) {
		return reconcile.Result{}, cmErr
	}
	exists := cmErr == nil
	if exists && cm.Labels[builtinaddon.Label] != scoringwire.Name {
		if err == nil {
			r.Recorder.Eventf(mca, nil, "Warning", "ConfigMapNotOwned", "Configure",
				"ConfigMap %s exists and was not made by the hub (no label %s=%s): the hub neither takes it over nor deletes it, and the add-on runs no scorers; delete it",
				key, builtinaddon.Label, scoringwire.Name)
		}
		return reconcile.Result{}, nil
	}
	if apierrors.IsNotFound(err) || !mca.DeletionTimestamp.IsZero() {
		if !exists {
			return reconcile.Result{}, nil
		}
		uid := cm.UID
		return reconcile.Result{}, client.IgnoreNotFound(r.Client.Delete(ctx, cm, client.Preconditions{UID: &uid}))
	}
	data, err := r.desired(ctx, cluster)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !exists {
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: scoringwire.ConfigMapName,
			Labels: map[string]string{builtinaddon.Label: scoringwire.Name}}, Data: map[string]string{scoringwire.SummariesKey: data}}
		err := r.Client.Create(ctx, cm)
		if apierrors.IsAlreadyExists(err) {
			// The hub caches only the ConfigMaps it labeled: this one is someone else's.
			r.Recorder.Eventf(mca, nil, "Warning", "ConfigMapNotOwned", "Configure",
				"ConfigMap %s exists and was not made by the hub (no label %s=%s): the hub neither takes it over nor deletes it, and the add-on runs no scorers; delete it",
				key, builtinaddon.Label, scoringwire.Name)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	if cm.Data[scoringwire.SummariesKey] == data && len(cm.Data) == 1 {
		return reconcile.Result{}, nil
	}
	cm.Data = map[string]string{scoringwire.SummariesKey: data}
	return reconcile.Result{}, r.Client.Update(ctx, cm)
}

// desired is the ConfigMap's summaries for cluster.
func (r *ConfigReconciler) desired(ctx context.Context, cluster string) (string, error) {
	ns := r.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	// Scorers elsewhere are refused (ScorerReconciler says so on each): none may take a score
	// name or point agents anywhere.
	scorers := &dsv1alpha1.DynamicScorerList{}
	if err := r.Client.List(ctx, scorers, client.InNamespace(ns)); err != nil {
		return "", err
	}
	configs := &dsv1alpha1.DynamicScoringConfigList{}
	if err := r.Client.List(ctx, configs, client.InNamespace(ns)); err != nil {
		return "", err
	}
	masks := map[string][]dsv1alpha1.ScoreMask{}
	for _, c := range configs.Items {
		masks[c.Namespace] = append(masks[c.Namespace], c.Spec.Masks...)
	}
	items := scorers.Items
	sort.Slice(items, func(i, j int) bool {
		if items[i].Namespace != items[j].Namespace {
			return items[i].Namespace < items[j].Namespace
		}
		return items[i].Name < items[j].Name
	})
	sums, problems := BuildSummaries(cluster, items, masks)
	for i := range items {
		if err := problems[items[i].Namespace+"/"+items[i].Name]; err != nil {
			ctrl.LoggerFrom(ctx).Info("a DynamicScorer is left out of the agents' list", "cluster", cluster, "problem", err.Error())
		}
	}
	data, err := scoringwire.EncodeSummaries(sums)
	if err != nil {
		return "", fmt.Errorf("encoding the scorers of cluster %s: %w", cluster, err)
	}
	return data, nil
}
