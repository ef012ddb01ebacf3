package clusterset

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
)

// Names of the sets every hub has.
const (
	// DefaultSetName is the set of clusters labeled clusterset=default, which every cluster
	// without a clusterset label is given.
	DefaultSetName = "default"
	// GlobalSetName is the set of all clusters.
	GlobalSetName = "global"
)

// DefaultSetSpecs returns the sets the hub creates on start.
func DefaultSetSpecs() []clusterv1beta2.ManagedClusterSet {
	return []clusterv1beta2.ManagedClusterSet{
		{
			ObjectMeta: metav1.ObjectMeta{Name: DefaultSetName},
			Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
				SelectorType: clusterv1beta2.ExclusiveClusterSetLabel,
			}},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: GlobalSetName},
			Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
				SelectorType:  clusterv1beta2.LabelSelector,
				LabelSelector: &metav1.LabelSelector{}, // empty: every cluster
			}},
		},
	}
}

// DefaultSets is a manager Runnable that creates the default and global sets when the hub becomes
// leader, and puts back their cluster selector if it was changed: the default label and the
// scheduler rely on what these two sets mean. A deleted default set comes back at the next start.
type DefaultSets struct {
	Client client.Client
}

var (
	_ manager.Runnable               = (*DefaultSets)(nil)
	_ manager.LeaderElectionRunnable = (*DefaultSets)(nil)
)

// startBackoff rides out an API server that is still starting (about 15 s in all); after that the
// hub stops, saying why, rather than run without its default sets.
var startBackoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: 8, Cap: 5 * time.Second}

// SetupWithManager adds the runnable to the manager.
func (d *DefaultSets) SetupWithManager(mgr ctrl.Manager) error { return mgr.Add(d) }

// NeedLeaderElection makes only the leader write the sets.
func (d *DefaultSets) NeedLeaderElection() bool { return true }

// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersets,verbs=get;list;watch;create;update

// Start ensures the default sets once and returns.
func (d *DefaultSets) Start(ctx context.Context) error {
	for _, want := range DefaultSetSpecs() {
		err := retry.OnError(startBackoff, func(error) bool { return ctx.Err() == nil }, func() error { return d.ensure(ctx, &want) })
		if err != nil {
			return fmt.Errorf("ensuring ManagedClusterSet %s: %w", want.Name, err)
		}
	}
	return nil
}

func (d *DefaultSets) ensure(ctx context.Context, want *clusterv1beta2.ManagedClusterSet) error {
	log := ctrl.LoggerFrom(ctx).WithValues("set", want.Name)
	got := &clusterv1beta2.ManagedClusterSet{}
	err := d.Client.Get(ctx, client.ObjectKeyFromObject(want), got)
	if apierrors.IsNotFound(err) {
		if err := d.Client.Create(ctx, want.DeepCopy()); err != nil {
			return err // AlreadyExists included: the retry then reads it
		}
		log.Info("created default ManagedClusterSet")
		return nil
	}
	if err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(got.Spec.ClusterSelector, want.Spec.ClusterSelector) {
		return nil
	}
	got.Spec.ClusterSelector = want.Spec.ClusterSelector
	if err := d.Client.Update(ctx, got); err != nil {
		return err
	}
	log.Info("restored the cluster selector of a default ManagedClusterSet")
	return nil
}

// DefaultLabelReconciler puts every cluster without a clusterset label in the default set, as OCM
// does. It never changes a label that is there, even an empty one.
type DefaultLabelReconciler struct {
	Client client.Client
}

var _ reconcile.Reconciler = (*DefaultLabelReconciler)(nil)

// SetupWithManager registers the reconciler.
func (r *DefaultLabelReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("managedcluster-default-clusterset").
		For(&clusterv1.ManagedCluster{}, builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Complete(r)
}

// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersets/join,resourceNames=default,verbs=create

// Reconcile adds the default clusterset label to a cluster that has none.
func (r *DefaultLabelReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, mc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !needsDefaultLabel(mc) {
		return reconcile.Result{}, nil
	}
	// The optimistic lock keeps a label someone set meanwhile: the patch then conflicts and the
	// retry sees it.
	patch := client.MergeFromWithOptions(mc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if mc.Labels == nil {
		mc.Labels = map[string]string{}
	}
	mc.Labels[clusterv1beta2.ClusterSetLabel] = DefaultSetName
	return reconcile.Result{}, r.Client.Patch(ctx, mc, patch)
}

// needsDefaultLabel reports whether mc should be given the default clusterset label.
func needsDefaultLabel(mc *clusterv1.ManagedCluster) bool {
	if !mc.DeletionTimestamp.IsZero() {
		return false
	}
	_, ok := mc.Labels[clusterv1beta2.ClusterSetLabel]
	return !ok
}
