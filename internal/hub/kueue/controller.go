package kueue

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	authv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	multiclusterv1alpha1 "github.com/flotilla/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/contract/kueueworker"
	"github.com/flotilla/flotilla/internal/hub/clusterprofile"
	"github.com/flotilla/flotilla/internal/hub/delivery"
)

// Reconciler keeps the MultiKueueConfig, MultiKueueClusters and Active condition of each
// AdmissionCheck of ControllerName current.
type Reconciler struct {
	// Client reads from the manager's cache and writes.
	Client client.Client
	// SecretReader reads the kubeconfig Secrets from the API server: the hub caches no Secrets.
	// The manager's APIReader when nil.
	SecretReader client.Reader
	Clock        clock.PassiveClock
	// Namespace is Kueue's, where Placements, ClusterProfiles and kubeconfig Secrets are;
	// DefaultNamespace when "".
	Namespace string
	// Source is where the MultiKueueClusters take their credentials from: SourceClusterProfile
	// unless SourceSecret.
	Source Source
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// ours says whether obj is an AdmissionCheck of ControllerName.
func ours(obj client.Object) bool {
	ac, ok := obj.(*kueuev1beta2.AdmissionCheck)
	return ok && ac.Spec.ControllerName == ControllerName
}

// SetupWithManager registers the reconciler and its watches.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Namespace == "" {
		r.Namespace = DefaultNamespace
	}
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.SecretReader == nil {
		r.SecretReader = mgr.GetAPIReader()
	}
	inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == r.Namespace })
	return ctrl.NewControllerManagedBy(mgr).
		Named("kueue-admissioncheck").
		For(&kueuev1beta2.AdmissionCheck{}, builder.WithPredicates(predicate.NewPredicateFuncs(ours))).
		Watches(&clusterv1beta1.Placement{}, handler.EnqueueRequestsFromMapFunc(r.checksOfPlacement(func(o client.Object) string { return o.GetName() })),
			builder.WithPredicates(inNamespace)).
		Watches(&clusterv1beta1.PlacementDecision{},
			handler.EnqueueRequestsFromMapFunc(r.checksOfPlacement(func(o client.Object) string { return o.GetLabels()[clusterv1beta1.PlacementLabel] })),
			builder.WithPredicates(inNamespace)).
		// Any of them, the hub's or not: someone else's object going away ends a name clash.
		Watches(&kueuev1beta2.MultiKueueConfig{}, handler.EnqueueRequestsFromMapFunc(r.allChecks)).
		Watches(&kueuev1beta2.MultiKueueCluster{}, handler.EnqueueRequestsFromMapFunc(r.allChecks)).
		// A decided cluster accepted again (or denied) changes what the Active condition says.
		// A cluster declared lost leaves every config, and comes back when it is (withoutLost).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.allChecks),
			builder.WithPredicates(predicate.Or(delivery.Changed, LostChanged))).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.allChecks), builder.WithPredicates(delivery.Changed)).
		// On the ClusterProfile path a worker's credentials are its profile here and the token of
		// its ManagedServiceAccount.
		Watches(&multiclusterv1alpha1.ClusterProfile{}, handler.EnqueueRequestsFromMapFunc(r.allChecks), builder.WithPredicates(inNamespace)).
		Watches(&authv1beta1.ManagedServiceAccount{}, handler.EnqueueRequestsFromMapFunc(r.allChecks),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == kueueworker.ManagedServiceAccount }))).
		Complete(r)
}

// checksOfPlacement maps an object to the checks naming the placement that name(obj) returns.
func (r *Reconciler) checksOfPlacement(name func(client.Object) string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		p := name(obj)
		if p == "" {
			return nil
		}
		var out []reconcile.Request
		for _, req := range r.allChecks(ctx, obj) {
			ac := &kueuev1beta2.AdmissionCheck{}
			if err := r.Client.Get(ctx, req.NamespacedName, ac); err == nil && ac.Spec.Parameters != nil && ac.Spec.Parameters.Name == p {
				out = append(out, req)
			}
		}
		return out
	}
}

// allChecks maps any object to every AdmissionCheck of ControllerName: there are few.
func (r *Reconciler) allChecks(ctx context.Context, _ client.Object) []reconcile.Request {
	l := &kueuev1beta2.AdmissionCheckList{}
	if err := r.Client.List(ctx, l); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing AdmissionChecks")
		return nil
	}
	var out []reconcile.Request
	for i := range l.Items {
		if ours(&l.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&l.Items[i])})
		}
	}
	return out
}

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=admissionchecks,verbs=get;list;watch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=admissionchecks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=multikueueconfigs;multikueueclusters,verbs=get;list;watch;create;update;patch;delete
// Reading the kubeconfig Secrets needs get on secrets in the Kueue namespace, which the hub's
// generated roles do not grant (no Secrets in its ClusterRole): the installer grants it with a
// Role there (docs/kueue.md); without it the check says so.
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements;placementdecisions;managedclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=multicluster.x-k8s.io,resources=clusterprofiles,verbs=get;list;watch
// +kubebuilder:rbac:groups=authentication.open-cluster-management.io,resources=managedserviceaccounts,verbs=get;list;watch

// Reconcile brings one AdmissionCheck's MultiKueue objects and Active condition up to date.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ac := &kueuev1beta2.AdmissionCheck{}
	if err := r.Client.Get(ctx, req.NamespacedName, ac); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	// Another controller's check is never touched; a check being deleted takes the hub's objects
	// with it (owner references).
	if !ours(ac) || !ac.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	s, err := r.observe(ctx, ac)
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := r.syncConfig(ctx, ac, &s); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.syncClusters(ctx, ac, &s); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.setActive(ctx, ac, Active(s, ac.Generation)); err != nil {
		return reconcile.Result{}, err
	}
	// Secrets are not watched (the hub caches none): look again while some are missing.
	if len(s.MissingSecrets) > 0 {
		return reconcile.Result{RequeueAfter: SecretPoll}, nil
	}
	return reconcile.Result{}, nil
}

// observe starts the check's State: its parameters, its placement and the clusters it decided
// that MultiKueue may use.
func (r *Reconciler) observe(ctx context.Context, ac *kueuev1beta2.AdmissionCheck) (State, error) {
	s := State{Namespace: r.Namespace, ParametersError: ParametersError(ac.Spec.Parameters, r.Namespace)}
	if s.ParametersError != "" {
		return s, nil
	}
	s.Placement = ac.Spec.Parameters.Name
	var err error
	if s.PlacementMissing, s.Clusters, err = r.decided(ctx, s.Placement); err != nil {
		return s, err
	}
	s.Clusters, s.Lost, err = r.withoutLost(ctx, s.Clusters)
	return s, err
}

// syncConfig writes the placement's MultiKueueConfig when it decided clusters; any other config
// of the check goes. A config the hub did not make is a clash in s.
func (r *Reconciler) syncConfig(ctx context.Context, ac *kueuev1beta2.AdmissionCheck, s *State) error {
	err := r.releaseOthers(ctx, ac, &kueuev1beta2.MultiKueueConfigList{}, func(name string) bool {
		return name == s.Placement && len(s.Clusters) > 0
	})
	if err != nil || len(s.Clusters) == 0 {
		return err
	}
	clash, err := r.writeConfig(ctx, ac, s.Placement, s.Clusters)
	if err != nil {
		return err
	}
	if clash {
		s.Clashes = append(s.Clashes, "MultiKueueConfig "+s.Placement)
	}
	return nil
}

// syncClusters writes one MultiKueueCluster per decided cluster and lets go of the check's
// others, recording in s the clashes and the kubeconfig Secrets that are not there yet.
func (r *Reconciler) syncClusters(ctx context.Context, ac *kueuev1beta2.AdmissionCheck, s *State) error {
	err := r.releaseOthers(ctx, ac, &kueuev1beta2.MultiKueueClusterList{}, func(name string) bool {
		return slices.Contains(s.Clusters, name)
	})
	if err != nil {
		return err
	}
	for _, name := range s.Clusters {
		clash, err := r.writeCluster(ctx, ac, name)
		if err != nil {
			return err
		}
		if clash {
			s.Clashes = append(s.Clashes, "MultiKueueCluster "+name)
		}
		check := r.checkSecret
		if r.Source != SourceSecret {
			check = r.checkProfile
		}
		if err := check(ctx, name, s); err != nil {
			return err
		}
	}
	return nil
}

// releaseOthers lists the hub's objects of list's kind and lets the check go of those it owns
// whose name keep refuses (release: deleted when no other check owns them).
func (r *Reconciler) releaseOthers(ctx context.Context, ac *kueuev1beta2.AdmissionCheck, list client.ObjectList, keep func(name string) bool) error {
	if err := r.Client.List(ctx, list, client.MatchingLabels{ManagedLabel: ManagedValue}); err != nil {
		return err
	}
	return meta.EachListItem(list, func(o runtime.Object) error {
		c := o.(client.Object)
		if !ownedBy(c.GetOwnerReferences(), ac.UID) || keep(c.GetName()) {
			return nil
		}
		return r.release(ctx, ac, c)
	})
}

// checkSecret records in s why the cluster's kubeconfig Secret cannot be used yet, if it cannot.
func (r *Reconciler) checkSecret(ctx context.Context, name string, s *State) error {
	switch ok, err := r.secretReady(ctx, name); {
	case apierrors.IsForbidden(err):
		s.SecretsForbidden = true
		s.MissingSecrets = append(s.MissingSecrets, SecretName(name))
	case err != nil:
		return err
	case !ok:
		// The hub writes no kubeconfig for a cluster it does not accept: say so, rather than
		// wait for one.
		why, err := delivery.Check(ctx, r.Client, name)
		if err != nil {
			return err
		}
		if why != nil {
			s.NotAccepted = append(s.NotAccepted, why.Message)
		} else {
			s.MissingSecrets = append(s.MissingSecrets, SecretName(name))
		}
	}
	return nil
}

// checkProfile records in s what the cluster's credentials on the ClusterProfile path still wait
// for, if anything: the hub gives none to a cluster it does not accept (package delivery); Kueue
// needs the cluster's ClusterProfile in its namespace (the hub keeps one there while the namespace
// binds a set that holds the cluster) with the hub's access provider, and the plugin needs the
// token of the cluster's ManagedServiceAccount.
func (r *Reconciler) checkProfile(ctx context.Context, name string, s *State) error {
	why, err := delivery.Check(ctx, r.Client, name)
	if err != nil {
		return err
	}
	if why != nil {
		s.NotAccepted = append(s.NotAccepted, why.Message)
		return nil
	}
	cp := &multiclusterv1alpha1.ClusterProfile{}
	switch err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: name}, cp); {
	case apierrors.IsNotFound(err):
		s.Pending = append(s.Pending, fmt.Sprintf("ClusterProfile %s/%s (the hub keeps one per cluster of the sets bound into namespace %s)", r.Namespace, name, r.Namespace))
	case err != nil:
		return err
	case !hasProvider(cp):
		why := "not written yet"
		if c := meta.FindStatusCondition(cp.Status.Conditions, clusterprofile.ConditionAccessProvider); c != nil {
			why = c.Message
		}
		s.Pending = append(s.Pending, fmt.Sprintf("ClusterProfile %s/%s has no access provider %s: %s", r.Namespace, name, clusterprofile.ProviderName, why))
	}
	msa := &authv1beta1.ManagedServiceAccount{}
	err = r.Client.Get(ctx, client.ObjectKey{Namespace: name, Name: kueueworker.ManagedServiceAccount}, msa)
	if apierrors.IsNotFound(err) {
		s.Pending = append(s.Pending, fmt.Sprintf("ManagedServiceAccount %s/%s (the hub makes it)", name, kueueworker.ManagedServiceAccount))
		return nil
	}
	if err != nil {
		return err
	}
	if pending := msa.TokenPending(); pending != "" {
		s.Pending = append(s.Pending, fmt.Sprintf("ManagedServiceAccount %s/%s %s", name, kueueworker.ManagedServiceAccount, pending))
	}
	return nil
}

// hasProvider says whether cp carries the hub's access provider, which Kueue's configuration
// maps to the credentials plugin.
func hasProvider(cp *multiclusterv1alpha1.ClusterProfile) bool {
	for _, p := range cp.Status.AccessProviders {
		if p.Name == clusterprofile.ProviderName {
			return true
		}
	}
	return false
}

// decided says whether the placement is missing, and which clusters it decided, best first.
func (r *Reconciler) decided(ctx context.Context, placement string) (missing bool, clusters []string, err error) {
	p := &clusterv1beta1.Placement{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: placement}, p); apierrors.IsNotFound(err) {
		return true, nil, nil
	} else if err != nil {
		return false, nil, err
	}
	l := &clusterv1beta1.PlacementDecisionList{}
	if err := r.Client.List(ctx, l, client.InNamespace(r.Namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: placement}); err != nil {
		return false, nil, err
	}
	// Only the placement's own decisions: a slice left by a deleted placement of the same name
	// is not one of them.
	var own []clusterv1beta1.PlacementDecision
	for _, d := range l.Items {
		if ref := metav1.GetControllerOf(&d); ref == nil || ref.UID == p.UID {
			own = append(own, d)
		}
	}
	return false, Clusters(own), nil
}

// withoutLost splits the decided clusters into those MultiKueue may use and those the hub declared
// lost (DeclaredLost). A lost worker is taken out of MultiKueue at once, before the RequeueReconciler puts
// its workloads back in the queue: Kueue reads every worker of a config on each reconcile of a
// workload, and a worker cut off by a real partition answers nothing, so each read would hang until
// the connection times out (about a minute) and hold up the re-placement (docs/failover.md).
func (r *Reconciler) withoutLost(ctx context.Context, decided []string) (keep, lost []string, err error) {
	for _, name := range decided {
		mc := &clusterv1.ManagedCluster{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			if apierrors.IsNotFound(err) {
				keep = append(keep, name) // delivery.Check says what is wrong with it
				continue
			}
			return nil, nil, err
		}
		if _, isLost := DeclaredLost(mc); isLost {
			lost = append(lost, name)
			continue
		}
		keep = append(keep, name)
	}
	return keep, lost, nil
}

// secretReady says whether cluster's kubeconfig Secret exists with its key.
func (r *Reconciler) secretReady(ctx context.Context, cluster string) (bool, error) {
	sec := &corev1.Secret{}
	err := r.SecretReader.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: SecretName(cluster)}, sec)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading Secret %s/%s: %w", r.Namespace, SecretName(cluster), err)
	}
	// A Secret of the hub's that is not marked as this cluster's kubeconfig, under a name that was
	// another cluster's token Secret's before issue 19, may hold what that cluster's agent wrote:
	// the credentials controller replaces it. The hub needs only to know the key is there: it
	// does not keep the kubeconfig.
	if managed(sec) && !markedAs(sec, CredentialKubeconfig, cluster) && wasTokenName(cluster) {
		return false, nil
	}
	return len(sec.Data[kueuev1beta2.MultiKueueConfigSecretKey]) > 0, nil
}

// setActive writes cond into ac's status when it changed.
func (r *Reconciler) setActive(ctx context.Context, ac *kueuev1beta2.AdmissionCheck, cond metav1.Condition) error {
	ac = ac.DeepCopy()
	cond.LastTransitionTime = metav1.NewTime(r.Clock.Now()) // kept when only the message changes
	if !meta.SetStatusCondition(&ac.Status.Conditions, cond) {
		return nil
	}
	if err := r.Client.Status().Update(ctx, ac); err != nil {
		return fmt.Errorf("writing the Active condition of AdmissionCheck %s: %w", ac.Name, err)
	}
	return nil
}
