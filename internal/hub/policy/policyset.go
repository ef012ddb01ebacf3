package policy

import (
	"context"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	policyv1beta1 "github.com/flotilla/flotilla/api/policy/v1beta1"
)

// SetReconciler writes each PolicySet's status from its policies' as OCM's does.
type SetReconciler struct {
	Client client.Client
}

var _ reconcile.Reconciler = (*SetReconciler)(nil)

// SetupWithManager registers the reconciler and its watches.
func (r *SetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("policyset").
		For(&policyv1beta1.PolicySet{}).
		// Root policies' status changes, bindings and decisions change the sets of their namespace.
		Watches(&policyv1.Policy{}, handler.EnqueueRequestsFromMapFunc(r.setsIn)).
		Watches(&policyv1.PlacementBinding{}, handler.EnqueueRequestsFromMapFunc(r.setsIn)).
		Watches(&clusterv1beta1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(r.setsIn)).
		Complete(r)
}

func (r *SetReconciler) setsIn(ctx context.Context, o client.Object) []reconcile.Request {
	if _, replicated := o.GetLabels()[policyv1.RootPolicyLabel]; replicated {
		return nil // its root's status change follows
	}
	l := &policyv1beta1.PolicySetList{}
	if err := r.Client.List(ctx, l, client.InNamespace(o.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing policy sets")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(l.Items))
	for i := range l.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&l.Items[i])})
	}
	return reqs
}

// +kubebuilder:rbac:groups=policy.open-cluster-management.io,resources=policysets,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy.open-cluster-management.io,resources=policysets/status,verbs=update;patch

// Reconcile writes one set's status.
func (r *SetReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	set := &policyv1beta1.PolicySet{}
	if err := r.Client.Get(ctx, req.NamespacedName, set); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	members := map[string]*policyv1.Policy{}
	for _, name := range set.Spec.Policies {
		p := &policyv1.Policy{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: set.Namespace, Name: string(name)}, p)
		if apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return reconcile.Result{}, err
		}
		members[string(name)] = p
	}
	decided, err := r.bindingClusters(ctx, set.Namespace)
	if err != nil {
		return reconcile.Result{}, err
	}
	st := setStatus(set, members, decided)
	if equality.Semantic.DeepEqual(set.Status, st) {
		return reconcile.Result{}, nil
	}
	next := set.DeepCopy()
	next.Status = st
	return reconcile.Result{}, client.IgnoreNotFound(r.Client.Status().Update(ctx, next))
}

// bindingClusters maps each PlacementBinding of ns to the clusters its Placement decides.
func (r *SetReconciler) bindingClusters(ctx context.Context, ns string) (map[string][]string, error) {
	bl := &policyv1.PlacementBindingList{}
	if err := r.Client.List(ctx, bl, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, b := range bl.Items {
		names, _, err := decidedClusters(ctx, r.Client, ns, b.PlacementRef)
		if err != nil {
			return nil, err
		}
		out[b.Name] = names
	}
	return out, nil
}

// setStatus is a set's status as OCM's policy set controller writes it: the bindings placing the
// set (from its policies' placements), the worst compliance of its policies on the set's
// clusters (shown only once every enabled policy reports), and a message naming the policies
// that are pending, disabled, silent or missing. members are the set's policies that exist;
// decided maps each binding to its placement's clusters.
func setStatus(set *policyv1beta1.PolicySet, members map[string]*policyv1.Policy, decided map[string][]string) policyv1beta1.PolicySetStatus {
	if len(set.Spec.Policies) == 0 {
		return policyv1beta1.PolicySetStatus{}
	}
	var found, missing, unknown, disabled, pending []string
	worst := policyv1.Compliant
	byBinding := map[string]policyv1beta1.PolicySetStatusPlacement{}
	for _, n := range set.Spec.Policies {
		name := string(n)
		p := members[name]
		if p == nil {
			missing = append(missing, name)
			continue
		}
		for _, pl := range p.Status.Placement {
			if pl.PolicySet == set.Name {
				byBinding[pl.PlacementBinding] = policyv1beta1.PolicySetStatusPlacement{PlacementBinding: pl.PlacementBinding, Placement: pl.Placement, PlacementRule: pl.PlacementRule}
			}
		}
		if p.Spec.Disabled {
			disabled = append(disabled, name)
			continue
		}
		excluded := excludedClusters(set, name)
		relevant := map[string]bool{}
		for b := range byBinding {
			for _, c := range decided[b] {
				if !excluded[c] {
					relevant[c] = true
				}
			}
		}
		switch c := complianceOn(p.Status.Status, relevant); c {
		case "":
			unknown = append(unknown, name)
		case policyv1.Pending:
			pending = append(pending, name)
			if worst != policyv1.NonCompliant {
				worst = policyv1.Pending
			}
		default:
			found = append(found, name)
			if c == policyv1.NonCompliant {
				worst = policyv1.NonCompliant
			}
		}
	}
	st := policyv1beta1.PolicySetStatus{Exclusions: exclusionStatus(set)}
	for _, b := range slices.Sorted(maps.Keys(byBinding)) {
		st.Placement = append(st.Placement, byBinding[b])
	}
	st.StatusMessage = setMessage(pending, disabled, unknown, missing, len(st.Exclusions) > 0)
	if len(unknown) == 0 && len(found)+len(pending) > 0 {
		st.Compliant = worst
	}
	return st
}

// complianceOn is the worst state among the clusters in relevant, or none if none reported.
func complianceOn(status []*policyv1.CompliancePerClusterStatus, relevant map[string]bool) policyv1.ComplianceState {
	var out policyv1.ComplianceState
	for _, s := range status {
		if !relevant[s.ClusterName] {
			continue
		}
		switch s.ComplianceState {
		case policyv1.NonCompliant:
			out = policyv1.NonCompliant
		case policyv1.Pending:
			if out != policyv1.NonCompliant {
				out = policyv1.Pending
			}
		case policyv1.Compliant:
			if out == "" {
				out = policyv1.Compliant
			}
		}
	}
	return out
}

func exclusionStatus(set *policyv1beta1.PolicySet) []policyv1beta1.PolicySetStatusExclusion {
	var out []policyv1beta1.PolicySetStatusExclusion
	for _, e := range set.Spec.Exclusions {
		if len(e.ClusterNames) == 0 {
			continue
		}
		out = append(out, policyv1beta1.PolicySetStatusExclusion{PolicyName: e.PolicyName, Clusters: slices.Sorted(slices.Values(e.ClusterNames))})
	}
	slices.SortFunc(out, func(a, b policyv1beta1.PolicySetStatusExclusion) int {
		return strings.Compare(string(a.PolicyName), string(b.PolicyName))
	})
	return out
}

// setMessage is OCM's status message, word for word.
func setMessage(pending, disabled, unknown, missing []string, excluded bool) string {
	var parts []string
	if len(pending) > 0 {
		parts = append(parts, "Policies awaiting pending dependencies: "+strings.Join(pending, ", "))
	}
	if len(disabled) > 0 {
		parts = append(parts, "Disabled policies: "+strings.Join(disabled, ", "))
	}
	if len(unknown) > 0 {
		parts = append(parts, "No status provided while awaiting policy status: "+strings.Join(unknown, ", "))
	}
	if len(missing) > 0 {
		parts = append(parts, "Deleted policies: "+strings.Join(missing, ", "))
	}
	const exclusionNote = "One or more policies were excluded. For details, see status.exclusions."
	if len(parts) == 0 {
		if excluded {
			return "All policies are reporting status; " + exclusionNote
		}
		return "All policies are reporting status"
	}
	if excluded {
		parts = append(parts, exclusionNote)
	}
	return strings.Join(parts, "; ")
}
