package addontemplate

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/hub/delivery"
)

// Reconciler deploys the agents of template add-ons: per ManagedClusterAddOn whose resolved
// configurations name an AddOnTemplate, its ManifestWork, registrations, hub permissions and
// work-based status.
type Reconciler struct {
	Client client.Client
	// Reader reads a ManagedClusterAddOn whose status write conflicted, from the API server; the
	// manager's when nil at set-up, Client in a test.
	Reader client.Reader
	Clock  clock.PassiveClock
	// Binder creates, updates and deletes the RoleBindings of hubPermissions; nil: Client. With
	// Identity, it acts as that ServiceAccount (NewBinder), so that the roles OCM add-ons grant
	// to OCM's add-on manager are the ones it may bind.
	Binder client.Client
	// Identity is the ServiceAccount Binder acts as, named in errors and fixes; nil when the
	// hub binds as itself.
	Identity *Identity
	// Checks are add-ons' own checks of what their agents are rendered from, by add-on name (the
	// built-in flower-addon's, internal/hub/flower): an error is ManifestApplied=False
	// (ConfigurationInvalid) with its message, which names the field and the fix, and nothing is
	// rendered; the add-on's existing work is left as it was.
	Checks map[string]Check
	// MaxConcurrentReconciles bounds how many add-ons are reconciled at once (default 48: an
	// add-on enabled on 1,000 clusters is 1,000 reconciles that each wait on two writes; with 16
	// the queue, not the API server, held bench-addon at 78 s, with 48 it took 59 s).
	MaxConcurrentReconciles int
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// Check is an add-on's check of the input its agent is rendered from (Reconciler.Checks).
type Check func(Input) error

// Indexes of ManagedClusterAddOns by the configurations their status resolves to.
const (
	templateIndex = "addontemplate.status.configReferences.addontemplates"
	configIndex   = "addontemplate.status.configReferences.addondeploymentconfigs"
)

// SetupWithManager registers the reconciler, its indexes and its watches.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Reader == nil {
		r.Reader = mgr.GetAPIReader()
	}
	idx := mgr.GetFieldIndexer()
	for name, resource := range map[string]string{templateIndex: "addontemplates", configIndex: "addondeploymentconfigs"} {
		err := idx.IndexField(context.Background(), &addonv1alpha1.ManagedClusterAddOn{}, name, func(o client.Object) []string {
			if ref := desiredConfig(o.(*addonv1alpha1.ManagedClusterAddOn), resource); ref != nil {
				return []string{ref.Namespace + "/" + ref.Name}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	workers := r.MaxConcurrentReconciles
	if workers <= 0 {
		workers = 48
	}
	byIndex := func(index string) handler.MapFunc {
		return func(ctx context.Context, o client.Object) []reconcile.Request {
			l := &addonv1alpha1.ManagedClusterAddOnList{}
			if err := r.Client.List(ctx, l, client.MatchingFields{index: o.GetNamespace() + "/" + o.GetName()}); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "listing the ManagedClusterAddOns of a configuration", "index", index, "name", o.GetName())
				return nil
			}
			return addonRequests(l.Items, func(*addonv1alpha1.ManagedClusterAddOn) bool { return true })
		}
	}
	// A role that did not exist may be the one a failed hubPermission waits for.
	created := predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return true }, UpdateFunc: func(event.UpdateEvent) bool { return false },
		DeleteFunc: func(event.DeleteEvent) bool { return false }, GenericFunc: func(event.GenericEvent) bool { return false },
	}
	waitingForRole := func(ctx context.Context, _ client.Object) []reconcile.Request { return r.waitingForRole(ctx) }
	return ctrl.NewControllerManagedBy(mgr).
		Named("addontemplate").
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		For(&addonv1alpha1.ManagedClusterAddOn{}).
		Watches(&workv1.ManifestWork{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			name, ok := o.GetLabels()[AddonLabel]
			if !ok {
				return nil
			}
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
		})).
		Watches(&rbacv1.RoleBinding{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			l := o.GetLabels()
			if l[OwnerLabel] == "" || l[ClusterLabel] == "" || l[AddonLabel] == "" {
				return r.grantingIdentity(ctx, o.(*rbacv1.RoleBinding).Subjects)
			}
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: l[ClusterLabel], Name: l[AddonLabel]}}}
		})).
		// A role granted to the add-on manager identity may be the one a failed hubPermission waits for.
		Watches(&rbacv1.ClusterRoleBinding{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return r.grantingIdentity(ctx, o.(*rbacv1.ClusterRoleBinding).Subjects)
		})).
		Watches(&addonv1alpha1.AddOnTemplate{}, handler.EnqueueRequestsFromMapFunc(byIndex(templateIndex))).
		Watches(&addonv1alpha1.AddOnDeploymentConfig{}, handler.EnqueueRequestsFromMapFunc(byIndex(configIndex))).
		Watches(&rbacv1.ClusterRole{}, handler.EnqueueRequestsFromMapFunc(waitingForRole), builder.WithPredicates(created)).
		Watches(&rbacv1.Role{}, handler.EnqueueRequestsFromMapFunc(waitingForRole), builder.WithPredicates(created)).
		// A cluster accepted again, or its namespace made anew, gets its add-ons' agents.
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.inCluster), builder.WithPredicates(delivery.Changed)).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.inCluster), builder.WithPredicates(delivery.Changed)).
		Complete(r)
}

// waitingForRole are the ManagedClusterAddOns whose hubPermissions could not all be bound.
func (r *Reconciler) waitingForRole(ctx context.Context) []reconcile.Request {
	l := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.Client.List(ctx, l); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the ManagedClusterAddOns waiting for a role")
		return nil
	}
	return addonRequests(l.Items, func(m *addonv1alpha1.ManagedClusterAddOn) bool {
		c := meta.FindStatusCondition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnRegistrationApplied)
		return c != nil && c.Reason == ReasonSetPermissionFailed
	})
}

// grantingIdentity is waitingForRole when a binding's subjects name the add-on manager identity.
func (r *Reconciler) grantingIdentity(ctx context.Context, subjects []rbacv1.Subject) []reconcile.Request {
	if !grantsIdentity(r.Identity, subjects) {
		return nil
	}
	return r.waitingForRole(ctx)
}

// inCluster maps a ManagedCluster or a Namespace to the ManagedClusterAddOns in the namespace of
// its name.
func (r *Reconciler) inCluster(ctx context.Context, o client.Object) []reconcile.Request {
	l := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := r.Client.List(ctx, l, client.InNamespace(o.GetName())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the ManagedClusterAddOns of a cluster", "cluster", o.GetName())
		return nil
	}
	return addonRequests(l.Items, func(*addonv1alpha1.ManagedClusterAddOn) bool { return true })
}

func addonRequests(items []addonv1alpha1.ManagedClusterAddOn, keep func(*addonv1alpha1.ManagedClusterAddOn) bool) []reconcile.Request {
	var out []reconcile.Request
	for i := range items {
		if keep(&items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&items[i])})
		}
	}
	return out
}

// desiredConfig is the desired configuration of the add-on's kind resource (group
// addon.open-cluster-management.io) in its status, nil without one or before its spec hash is known.
func desiredConfig(mca *addonv1alpha1.ManagedClusterAddOn, resource string) *addonv1alpha1.ConfigSpecHash {
	for _, c := range mca.Status.ConfigReferences {
		if c.Group == addonv1alpha1.GroupVersion.Group && c.Resource == resource && c.DesiredConfig != nil && c.DesiredConfig.SpecHash != "" {
			return c.DesiredConfig
		}
	}
	return nil
}

// WorkName is the name of a template add-on's ManifestWork (OCM's first deploy work).
func WorkName(addon string) string { return "addon-" + addon + "-deploy-0" }

// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons,verbs=get;list;watch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons/status,verbs=update;patch
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=managedclusteraddons/finalizers,verbs=update
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=addontemplates;addondeploymentconfigs;clustermanagementaddons,verbs=get;list;watch
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles;roles;clusterrolebindings,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// Reconcile deploys one template add-on's agent, or removes what the hub made for it.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	err := r.Client.Get(ctx, req.NamespacedName, mca)
	if apierrors.IsNotFound(err) {
		// The garbage collector removes what the add-on owns; bindings in other namespaces are ours.
		return reconcile.Result{}, r.removeBindings(ctx, req.Namespace, req.Name, nil)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if !mca.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, r.removeBindings(ctx, mca.Namespace, mca.Name, nil)
	}
	ref := desiredConfig(mca, "addontemplates")
	if ref == nil {
		// Not (or no longer) a template add-on: remove its agent if the hub deployed one.
		return reconcile.Result{}, errors.Join(r.removeWork(ctx, mca), r.removeBindings(ctx, mca.Namespace, mca.Name, nil))
	}
	// As OCM's template add-ons (ConfigCheckEnabled): nothing is deployed before the add-on's
	// configurations are (the hub's lifecycle controller says so with Configured).
	if !meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionConfigured) {
		return reconcile.Result{}, nil
	}
	d, err := r.prepare(ctx, mca, ref)
	if err != nil || d == nil {
		return reconcile.Result{}, err
	}
	st := mca.Status.DeepCopy()
	now := metav1.NewTime(r.Clock.Now())
	set := func(c metav1.Condition) {
		c.ObservedGeneration, c.LastTransitionTime = mca.Generation, now
		meta.SetStatusCondition(&st.Conditions, c)
	}
	if d.refused != nil {
		set(*d.refused)
		return reconcile.Result{}, r.writeStatus(ctx, mca, st)
	}
	return reconcile.Result{}, r.deploy(ctx, mca, d, st, set)
}

// agentPlan is what one pass deploys for a template add-on, or why it deploys nothing.
type agentPlan struct {
	tmpl     *addonv1alpha1.AddOnTemplate
	rendered *Rendered
	// refused, when set, is the ManifestApplied=False condition that says why nothing is
	// deployed; the add-on's work and bindings stay as the hub last made them.
	refused *metav1.Condition
}

// prepare reads what the add-on's agent is rendered from, checks it and renders it. It returns
// nil while a configuration the add-on names does not exist: the lifecycle controller reports
// that (Configured), and the configuration's creation brings the add-on back here.
func (r *Reconciler) prepare(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, ref *addonv1alpha1.ConfigSpecHash) (*agentPlan, error) {
	refuse := func(reason, msg string) (*agentPlan, error) {
		return &agentPlan{refused: &metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnManifestApplied,
			Status: metav1.ConditionFalse, Reason: reason, Message: msg}}, nil
	}
	// A cluster the hub does not accept, that is being deleted, or whose namespace terminates gets
	// no agent: its namespace is being emptied, which a work made anew would undo on every pass
	// (OCM's add-on manager likewise deploys nothing on a cluster being deleted). Its work, if
	// any, is the registration controller's to remove; ManifestApplied says why.
	why, err := delivery.Check(ctx, r.Client, mca.Namespace)
	if err != nil {
		return nil, err
	}
	if why != nil {
		return refuse(why.Reason, why.Message)
	}
	// status.configReferences says which of the configurations the hub allows this add-on runs
	// now (the rollout decides), but the agent may write it too: what it names is used only if
	// the hub allows it for this add-on on this cluster.
	tmpl, refusal, err := allowedTemplate(ctx, r.Client, mca, ref)
	if err != nil || tmpl == nil && refusal == "" {
		return nil, err
	}
	if refusal != "" {
		return refuse(ReasonConfigurationNotAllowed, refusal)
	}
	in := Input{Cluster: mca.Namespace, Addon: mca.Name, Template: tmpl}
	if c := desiredConfig(mca, "addondeploymentconfigs"); c != nil {
		in.Config = &addonv1alpha1.AddOnDeploymentConfig{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.Name}, in.Config); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
	}
	if check := r.Checks[mca.Name]; check != nil {
		if err := check(in); err != nil {
			return refuse(ReasonConfigurationInvalid, err.Error())
		}
	}
	rendered, err := Render(in)
	if err != nil {
		return refuse(ReasonTemplateInvalid, fmt.Sprintf("AddOnTemplate %s: %v", tmpl.Name, err))
	}
	return &agentPlan{tmpl: tmpl, rendered: rendered}, nil
}

// deploy binds the add-on's hub permissions, applies its work and writes what came of both
// into its status.
func (r *Reconciler) deploy(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, d *agentPlan,
	st *addonv1alpha1.ManagedClusterAddOnStatus, set func(metav1.Condition)) error {
	st.Registrations = Registrations(mca.Namespace, mca.Name, d.tmpl)
	st.Namespace = d.rendered.InstallNamespace
	st.HealthCheck.Mode = addonv1alpha1.HealthCheckModeCustomized

	var errs []error
	problems, err := r.applyBindings(ctx, mca, d.tmpl)
	errs = append(errs, err)
	if len(problems) > 0 {
		set(metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnRegistrationApplied, Status: metav1.ConditionFalse,
			Reason: ReasonSetPermissionFailed, Message: fmt.Sprintf("AddOnTemplate %s: %s", d.tmpl.Name, joinProblems(problems))})
	} else if err == nil {
		set(metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnRegistrationApplied, Status: metav1.ConditionTrue,
			Reason: ReasonSetPermissionApplied, Message: "Registration of the addon agent is configured"})
	}

	work, err := r.applyWork(ctx, mca, d.rendered)
	if apierrors.IsAlreadyExists(err) {
		// The work this controller made a moment ago is not in its cache yet: nothing failed, and
		// the work's own event brings the add-on back (a ManifestApplied=False here was a false
		// alarm, seen with 48 workers at 1,000 clusters).
		return err
	}
	if err != nil {
		set(metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnManifestApplied, Status: metav1.ConditionFalse,
			Reason: ReasonWorkApplyFailed, Message: fmt.Sprintf("failed to apply manifestWork: %v", err)})
		var refused *refusedError
		if !errors.As(err, &refused) {
			errs = append(errs, err)
		}
	} else if c := manifestApplied(work); c != nil {
		set(*c)
	} else if c := meta.FindStatusCondition(st.Conditions, addonv1alpha1.ManagedClusterAddOnManifestApplied); c != nil && c.Status == metav1.ConditionFalse {
		// Not reported yet for this work: an earlier failure no longer holds (OCM drops it too).
		meta.RemoveStatusCondition(&st.Conditions, addonv1alpha1.ManagedClusterAddOnManifestApplied)
	}
	if err == nil {
		set(available(mca.Name, work, d.rendered.Workloads))
	}
	errs = append(errs, r.writeStatus(ctx, mca, st))
	return errors.Join(errs...)
}
