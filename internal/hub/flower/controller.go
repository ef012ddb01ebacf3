package flower

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/certs"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
)

// Reconciler keeps the hub's side of flower-addon (see the package documentation). It has one
// key: the add-on's name.
type Reconciler struct {
	// Client reads the add-on's ClusterManagementAddOn and ManagedClusterAddOns from the cache
	// and writes; Reader reads flower-system, the template and the config from the API server.
	Client  client.Client
	Reader  client.Reader
	Clock   clock.PassiveClock
	Options Options
	// Resync is how often flower-system is looked at again while the add-on is enabled somewhere
	// (a minute when zero); Retry how soon while the SuperLink is not available (10 s when zero).
	Resync, Retry time.Duration
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// SetupWithManager registers the controller. Reader defaults to the manager's API reader.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Reader == nil {
		r.Reader = mgr.GetAPIReader()
	}
	if err := r.Options.Validate(); err != nil {
		return err
	}
	r.Options = r.Options.withDefaults()
	one := func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: AddonName}}}
	}
	named := func(ns, name string) predicate.Predicate {
		return predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == ns && o.GetName() == name })
	}
	// A cluster's add-on matters when it comes, goes, or starts going; not at each status write.
	enabledChanged := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
	}}
	return ctrl.NewControllerManagedBy(mgr).
		Named("flower").
		For(&addonv1alpha1.ClusterManagementAddOn{}, builder.WithPredicates(named("", AddonName))).
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, handler.EnqueueRequestsFromMapFunc(one),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == AddonName }), enabledChanged)).
		Watches(&addonv1alpha1.AddOnTemplate{}, handler.EnqueueRequestsFromMapFunc(one),
			builder.WithPredicates(named("", builtinaddon.FlowerTemplate))).
		Watches(&addonv1alpha1.AddOnDeploymentConfig{}, handler.EnqueueRequestsFromMapFunc(one),
			builder.WithPredicates(named(Namespace, builtinaddon.FlowerDeploymentConfig))).
		Complete(r)
}

// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=clustermanagementaddons;managedclusteraddons;addontemplates;addondeploymentconfigs,verbs=get;list;watch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons/status,verbs=update;patch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=addontemplates,verbs=create
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=addontemplates,resourceNames=flower-addon,verbs=update
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;create
// +kubebuilder:rbac:groups="",namespace=flower-system,resources=secrets;configmaps;services,verbs=get;create;update;delete
// +kubebuilder:rbac:groups=apps,namespace=flower-system,resources=deployments,verbs=get;create;update;delete
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,namespace=flower-system,resources=addondeploymentconfigs,verbs=create;update

// Reconcile keeps the SuperLink and what it needs while the add-on is enabled on a cluster, and
// reports in each of its ManagedClusterAddOns.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: AddonName}, cma); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		return reconcile.Result{}, r.stop(ctx)
	}
	if !owned(cma.Labels) {
		log.Info("ClusterManagementAddOn flower-addon is not Flotilla's: the hub runs no SuperLink for it", "label", builtinaddon.Label)
		return reconcile.Result{}, nil
	}
	mcas, err := r.enabled(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	if len(mcas) == 0 {
		return reconcile.Result{}, r.stop(ctx)
	}
	now := r.Clock.Now()
	deploy, renew, syncErr := r.sync(ctx, now)
	cond := condition(r.Options, deploy, syncErr)
	if syncErr != nil {
		log.Error(syncErr, "keeping the SuperLink")
	}
	reportErr := r.report(ctx, mcas, cond, now)

	after := orDefault(r.Resync, time.Minute)
	if cond.Reason == ReasonUnavailable {
		after = orDefault(r.Retry, 10*time.Second)
	}
	if !renew.IsZero() && renew.Sub(now) < after {
		after = max(renew.Sub(now), time.Second)
	}
	var conflict *conflictError
	if syncErr != nil && !errors.As(syncErr, &conflict) && !apierrors.IsForbidden(syncErr) {
		// Passing errors: again with the workqueue's backoff.
		return reconcile.Result{}, errors.Join(syncErr, reportErr)
	}
	return reconcile.Result{RequeueAfter: after}, reportErr
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// enabled are the add-on's ManagedClusterAddOns that are not being deleted.
func (r *Reconciler) enabled(ctx context.Context) ([]addonv1alpha1.ManagedClusterAddOn, error) {
	l := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.Client.List(ctx, l); err != nil {
		return nil, err
	}
	var out []addonv1alpha1.ManagedClusterAddOn
	for _, m := range l.Items {
		if m.Name == AddonName && m.DeletionTimestamp.IsZero() {
			out = append(out, m)
		}
	}
	return out, nil
}

// stop removes the SuperLink's Deployment and Service the hub made. What it cannot read it
// cannot have made: a hub without its Role in flower-system has nothing to remove there.
func (r *Reconciler) stop(ctx context.Context) error {
	var errs []error
	for _, o := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}} {
		o.SetNamespace(Namespace)
		o.SetName(SuperLinkName)
		if err := r.remove(ctx, o); err != nil && !apierrors.IsForbidden(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// sync writes what the SuperLink needs and the SuperLink, in order, stopping at the first
// problem. It returns the SuperLink's Deployment as the API server has it, and when the serving
// certificate is to be renewed.
func (r *Reconciler) sync(ctx context.Context, now time.Time) (*appsv1.Deployment, time.Time, error) {
	o := r.Options
	if err := r.ensureNamespace(ctx); err != nil {
		return nil, time.Time{}, err
	}
	var caPEM []byte
	var servingHash string
	var renew time.Time
	if !o.Insecure {
		ca, err := r.ensureCA(ctx, now)
		if err != nil {
			return nil, time.Time{}, err
		}
		caPEM = ca.CertPEM()
		if servingHash, renew, err = r.ensureServing(ctx, ca, now); err != nil {
			return nil, time.Time{}, err
		}
		if err := r.ensure(ctx, hubCAConfigMap(caPEM)); err != nil {
			return nil, time.Time{}, err
		}
	}
	tmpl, err := addOnTemplate(o, caPEM)
	if err != nil {
		return nil, time.Time{}, err
	}
	for _, want := range []client.Object{tmpl, deploymentConfig(o), superLinkService(), superLinkDeployment(o, servingHash)} {
		if err := r.ensure(ctx, want); err != nil {
			return nil, renew, err
		}
	}
	deploy := &appsv1.Deployment{}
	if err := r.Reader.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: SuperLinkName}, deploy); err != nil {
		return nil, renew, fmt.Errorf("reading Deployment %s/%s: %w", Namespace, SuperLinkName, err)
	}
	return deploy, renew, nil
}

// ensureCA returns the CA, made (again) when missing, unreadable or near its end.
func (r *Reconciler) ensureCA(ctx context.Context, now time.Time) (*certs.CA, error) {
	s := &corev1.Secret{}
	err := r.Reader.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: CASecret}, s)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading Secret %s/%s: %w", Namespace, CASecret, err)
	}
	if err == nil {
		if !owned(s.Labels) {
			return nil, &conflictError{kind: "Secret", key: Namespace + "/" + CASecret}
		}
		ca, why := readCA(s, now)
		if why == "" {
			return ca, nil
		}
		ctrl.LoggerFrom(ctx).Info("making a new Flower CA", "why", why)
	}
	fresh, err := newCASecret(now)
	if err != nil {
		return nil, err
	}
	if err := r.writeSecret(ctx, fresh, s); err != nil {
		return nil, err
	}
	ca, _ := readCA(fresh, now)
	return ca, nil
}

// ensureServing keeps the SuperLink's serving certificate issued by ca for the Service's names
// and the external address; it returns its hash and when to renew it.
func (r *Reconciler) ensureServing(ctx context.Context, ca *certs.CA, now time.Time) (string, time.Time, error) {
	s := &corev1.Secret{}
	err := r.Reader.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: ServingSecret}, s)
	if err != nil && !apierrors.IsNotFound(err) {
		return "", time.Time{}, fmt.Errorf("reading Secret %s/%s: %w", Namespace, ServingSecret, err)
	}
	if err == nil {
		if !owned(s.Labels) {
			return "", time.Time{}, &conflictError{kind: "Secret", key: Namespace + "/" + ServingSecret}
		}
		why, renew := servingProblem(s, ca, r.Options, now)
		if why == "" {
			return pemHash(s.Data[corev1.TLSCertKey]), renew, nil
		}
		ctrl.LoggerFrom(ctx).Info("issuing the SuperLink's serving certificate again", "why", why)
	}
	fresh, err := newServingSecret(ca, r.Options, now)
	if err != nil {
		return "", time.Time{}, err
	}
	if err := r.writeSecret(ctx, fresh, s); err != nil {
		return "", time.Time{}, err
	}
	_, renew := servingProblem(fresh, ca, r.Options, now)
	return pemHash(fresh.Data[corev1.TLSCertKey]), renew, nil
}

// writeSecret creates want, or replaces old (the hub's, read before) with it.
func (r *Reconciler) writeSecret(ctx context.Context, want, old *corev1.Secret) error {
	if old.ResourceVersion == "" {
		if err := r.Client.Create(ctx, want); err != nil {
			return fmt.Errorf("creating Secret %s: %w", keyOf(want), err)
		}
		return nil
	}
	want.ResourceVersion = old.ResourceVersion
	if err := r.Client.Update(ctx, want); err != nil {
		return fmt.Errorf("updating Secret %s: %w", keyOf(want), err)
	}
	return nil
}
