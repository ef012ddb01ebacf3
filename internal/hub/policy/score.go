package policy

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/internal/hub/delivery"
)

// ComplianceScoreName is the AddOnPlacementScore, in each cluster's namespace, that says the
// cluster's compliance with each policy placed on it, so that placements can require or prefer
// compliance with OCM's own mechanisms: a CEL predicate such as
//
//	managedCluster.scores("governance-compliance").exists(s, s.name == "governance.data-residency-eu" && s.value == 100)
//
// or an AddOn prioritizer on a score name. Flotilla's extension (OCM has none).
const ComplianceScoreName = "governance-compliance"

// ComplianceScoreLabel marks the score the hub writes; it never writes or deletes one without it.
const ComplianceScoreLabel = "policy.flotilla.io/compliance-score"

// Score values: compliant, not compliant, and pending or not reported.
const (
	ScoreCompliant    = 100
	ScoreNonCompliant = -100
	ScoreUnknown      = 0
)

// ScoreReconciler keeps each cluster's ComplianceScoreName from the hub's copies of policies in
// the cluster's namespace: one score per copy, named after its root (<namespace>.<name>).
type ScoreReconciler struct {
	Client client.Client
}

var _ reconcile.Reconciler = (*ScoreReconciler)(nil)

// SetupWithManager registers the reconciler: a cluster's copies, its score and the cluster
// itself bring its namespace back.
func (r *ScoreReconciler) SetupWithManager(mgr ctrl.Manager) error {
	byNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetNamespace()}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("policy-compliance-score").
		Watches(&policyv1.Policy{}, byNamespace, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetLabels()[policyv1.RootPolicyLabel] != ""
		}))).
		Watches(&clusterv1alpha1.AddOnPlacementScore{}, byNamespace, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetName() == ComplianceScoreName
		}))).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetName()}}}
		}), builder.WithPredicates(delivery.Changed)).
		Complete(r)
}

// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=addonplacementscores,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=addonplacementscores/status,verbs=update;patch

// Reconcile writes (or deletes) the compliance score of the cluster req.Name.
func (r *ScoreReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cluster := req.Name
	l := &policyv1.PolicyList{}
	if err := r.Client.List(ctx, l, client.InNamespace(cluster)); err != nil {
		return reconcile.Result{}, err
	}
	want := complianceScores(l.Items)
	key := client.ObjectKey{Namespace: cluster, Name: ComplianceScoreName}
	score := &clusterv1alpha1.AddOnPlacementScore{}
	err := r.Client.Get(ctx, key, score)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	if exists && score.Labels[ComplianceScoreLabel] != "true" {
		log.FromContext(ctx).Info("AddOnPlacementScore exists and was not made by the hub: left alone", "score", key, "label", ComplianceScoreLabel)
		return reconcile.Result{}, nil
	}
	// No copies, or a namespace that is no cluster's (a root's): no score.
	if len(want) == 0 || !r.isCluster(ctx, cluster) {
		if exists {
			uid := score.UID
			return reconcile.Result{}, client.IgnoreNotFound(r.Client.Delete(ctx, score, client.Preconditions{UID: &uid}))
		}
		return reconcile.Result{}, nil
	}
	if !exists {
		score = &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: ComplianceScoreName,
			Labels: map[string]string{ComplianceScoreLabel: "true"}}}
		if err := r.Client.Create(ctx, score); err != nil {
			return reconcile.Result{}, client.IgnoreAlreadyExists(err)
		}
	}
	if equality.Semantic.DeepEqual(score.Status.Scores, want) && score.Status.ValidUntil == nil {
		return reconcile.Result{}, nil
	}
	score.Status.Scores, score.Status.ValidUntil = want, nil
	return reconcile.Result{}, r.Client.Status().Update(ctx, score)
}

// isCluster reports whether a ManagedCluster of that name exists.
func (r *ScoreReconciler) isCluster(ctx context.Context, name string) bool {
	return r.Client.Get(ctx, client.ObjectKey{Name: name}, &clusterv1.ManagedCluster{}) == nil
}

// complianceScores are the scores of the hub's copies among policies (one cluster's namespace),
// sorted by name.
func complianceScores(policies []policyv1.Policy) []clusterv1alpha1.AddOnPlacementScoreItem {
	var out []clusterv1alpha1.AddOnPlacementScoreItem
	for i := range policies {
		p := &policies[i]
		root := p.Labels[policyv1.RootPolicyLabel]
		if root == "" || !owned(p) || !p.DeletionTimestamp.IsZero() {
			continue
		}
		v := int32(ScoreUnknown)
		switch p.Status.ComplianceState {
		case policyv1.Compliant:
			v = ScoreCompliant
		case policyv1.NonCompliant:
			v = ScoreNonCompliant
		}
		out = append(out, clusterv1alpha1.AddOnPlacementScoreItem{Name: root, Value: v})
	}
	slices.SortFunc(out, func(a, b clusterv1alpha1.AddOnPlacementScoreItem) int { return strings.Compare(a.Name, b.Name) })
	return out
}
