package addon

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/core/conditions"
)

const (
	// AddonLabel on a ManifestWork names the add-on whose agent it deploys (OCM's label).
	AddonLabel = "addon.open-cluster-management.io/addon-name"
	// AddonNamespaceLabel on a ManifestWork names the cluster of the add-on it deploys when that
	// is not the ManifestWork's namespace (hosted mode, OCM's label); such works are not read here.
	AddonNamespaceLabel = "addon.open-cluster-management.io/addon-namespace"
	// ConfigSpecHashAnnotation on an add-on's ManifestWork holds, as JSON, the spec hash of each
	// configuration the work was rendered with, keyed <resource>.<group>/<namespace>/<name>
	// (OCM's annotation).
	ConfigSpecHashAnnotation = "work.open-cluster-management.io/manifest-config-spec-hash"
)

// ProgressingReconciler sets each ManagedClusterAddOn's Progressing condition and, once its
// agent's ManifestWorks run the desired configurations, lastAppliedConfig: OCM's addon
// progressing controller.
type ProgressingReconciler struct {
	Client client.Client
	Clock  clock.PassiveClock
}

var _ reconcile.Reconciler = (*ProgressingReconciler)(nil)

// SetupWithManager registers the reconciler and its watches; it uses the name index of
// ManagedClusterAddOns that Reconciler.SetupWithManager adds, so it is set up after it.
func (r *ProgressingReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("addon-progressing").
		For(&addonv1alpha1.ManagedClusterAddOn{}).
		Watches(&workv1.ManifestWork{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			name, ok := o.GetLabels()[AddonLabel]
			if !ok || o.GetLabels()[AddonNamespaceLabel] != "" {
				return nil
			}
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
		})).
		Watches(&addonv1alpha1.ClusterManagementAddOn{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			l := &addonv1alpha1.ManagedClusterAddOnList{}
			if err := r.Client.List(ctx, l, client.MatchingFields{nameIndex: o.GetName()}); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "listing the ManagedClusterAddOns of an add-on", "addon", o.GetName())
				return nil
			}
			out := make([]reconcile.Request, 0, len(l.Items))
			for _, m := range l.Items {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&m)})
			}
			return out
		})).
		// One small write per add-on: an add-on on 1,000 clusters finishes 1,000 at once.
		WithOptions(controller.Options{MaxConcurrentReconciles: 16}).
		Complete(r)
}

// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=get;list;watch

// Reconcile sets one ManagedClusterAddOn's Progressing condition.
func (r *ProgressingReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := r.Client.Get(ctx, req.NamespacedName, mca); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	// Add-ons without a ClusterManagementAddOn are not managed by the hub.
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: mca.Name}, cma)
	if apierrors.IsNotFound(err) || !mca.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	st, err := Progress(ctx, r.Client, cma, mca, mca.Status, metav1.NewTime(r.Clock.Now()))
	if err != nil || !ProgressChanged(mca.Status, st) {
		return reconcile.Result{}, err
	}
	mca = mca.DeepCopy()
	mca.Status = st
	return reconcile.Result{}, client.IgnoreNotFound(r.Client.Status().Update(ctx, mca))
}

// Progress is st, the status about to be written to mca, with the Progressing condition and the
// lastAppliedConfigs that this controller would derive from it and the add-on's ManifestWorks
// (read through c). Every controller that writes an add-on's status puts them in its own write
// (the lifecycle and template controllers do), so that the progressing controller, woken by that
// write, finds nothing to change: one write instead of two, and no conflict between the two
// writers of one status. st is returned as it is while the add-on is being deleted or st's
// supportedConfigs are not cma's kinds yet: which kinds the add-on supports is the lifecycle
// controller's word, and until it has written the current list every configuration would look
// unsupported (its write brings the add-on back here).
func Progress(ctx context.Context, c client.Reader, cma *addonv1alpha1.ClusterManagementAddOn, mca *addonv1alpha1.ManagedClusterAddOn,
	st addonv1alpha1.ManagedClusterAddOnStatus, now metav1.Time) (addonv1alpha1.ManagedClusterAddOnStatus, error) {
	if !mca.DeletionTimestamp.IsZero() || !slices.Equal(supportedKinds(cma), st.SupportedConfigs) {
		return st, nil
	}
	l := &workv1.ManifestWorkList{}
	if err := c.List(ctx, l, client.InNamespace(mca.Namespace), client.MatchingLabels{AddonLabel: mca.Name}); err != nil {
		return st, fmt.Errorf("listing the ManifestWorks of ManagedClusterAddOn %s/%s: %w", mca.Namespace, mca.Name, err)
	}
	next := *mca
	next.Status = st
	return progressingStatus(&next, l.Items, now), nil
}

// ProgressChanged says whether st's Progressing condition (without its transition time) or
// configReferences differ from old's.
func ProgressChanged(old, st addonv1alpha1.ManagedClusterAddOnStatus) bool {
	return !conditions.Same(old.Conditions, st.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing) ||
		!equality.Semantic.DeepEqual(old.ConfigReferences, st.ConfigReferences)
}

// progressingStatus is mca's status with the Progressing condition OCM's addon manager would set
// from the add-on's ManifestWorks (works), in this order: a spec.configs entry of a kind the
// add-on does not support: False, ConfigurationUnsupported; no ManifestApplied condition yet:
// False, WaitingForManifestApplied; no ManifestWork, one rendered with other configurations
// than status.configReferences desires, or one not yet Applied and Available for its
// generation: True, Progressing; otherwise False, Completed, and every configuration's
// lastAppliedConfig becomes its desiredConfig.
func progressingStatus(mca *addonv1alpha1.ManagedClusterAddOn, works []workv1.ManifestWork, now metav1.Time) addonv1alpha1.ManagedClusterAddOnStatus {
	st := *mca.Status.DeepCopy()
	set := func(status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnConditionProgressing,
			Status: status, Reason: reason, Message: msg, ObservedGeneration: mca.Generation, LastTransitionTime: now})
	}
	supported := map[addonv1alpha1.ConfigGroupResource]bool{}
	for _, gr := range mca.Status.SupportedConfigs {
		supported[gr] = true
	}
	for i, c := range mca.Spec.Configs {
		if !supported[c.ConfigGroupResource] {
			set(metav1.ConditionFalse, addonv1alpha1.ProgressingReasonConfigurationUnsupported,
				fmt.Sprintf("Configuration with gvr %s/%s is not supported for this addon (spec.configs[%d]): use one of the kinds in status.supportedConfigs",
					c.Group, c.Resource, i))
			return st
		}
	}
	if meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnManifestApplied) == nil {
		set(metav1.ConditionFalse, ReasonWaitingForManifestApplied, "Waiting for ManagedClusterAddOn ManifestApplied condition")
		return st
	}
	n := 0
	for i := range works {
		w := &works[i]
		if w.Labels[AddonNamespaceLabel] != "" || strings.HasPrefix(w.Name, PreDeleteWorkName(mca.Name)) {
			continue
		}
		n++
		if !workConfigsMatch(w, mca) {
			set(metav1.ConditionTrue, ReasonProgressing, "progressing... mca and work configs mismatch")
			return st
		}
		if !workReady(w) {
			set(metav1.ConditionTrue, ReasonProgressing, "progressing... work is not ready")
			return st
		}
	}
	if n == 0 {
		set(metav1.ConditionTrue, ReasonProgressing, "progressing... no addon works")
		return st
	}
	for i := range st.ConfigReferences {
		st.ConfigReferences[i].LastAppliedConfig = st.ConfigReferences[i].DesiredConfig.DeepCopy()
	}
	set(metav1.ConditionFalse, ReasonCompleted, "completed with no errors.")
	return st
}

// PreDeleteWorkName is the name (prefix) of an add-on's pre-delete hook ManifestWork, OCM's.
func PreDeleteWorkName(addon string) string { return "addon-" + addon + "-pre-delete" }

// workConfigsMatch says whether w was rendered with the configurations mca desires: its
// ConfigSpecHashAnnotation names exactly those, with their hashes. A work without the annotation
// matches an add-on without configurations.
func workConfigsMatch(w *workv1.ManifestWork, mca *addonv1alpha1.ManagedClusterAddOn) bool {
	raw, ok := w.Annotations[ConfigSpecHashAnnotation]
	if !ok {
		return len(mca.Status.ConfigReferences) == 0
	}
	got := map[string]string{}
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		return false
	}
	for _, v := range got {
		if v == "" {
			return false
		}
	}
	want := map[string]string{}
	for _, c := range mca.Status.ConfigReferences {
		if c.DesiredConfig == nil || c.DesiredConfig.SpecHash == "" {
			return false
		}
		want[ConfigHashKey(c.ConfigGroupResource, c.DesiredConfig.ConfigReferent)] = c.DesiredConfig.SpecHash
	}
	return equality.Semantic.DeepEqual(got, want)
}

// ConfigHashKey is the key of a configuration in ConfigSpecHashAnnotation:
// <resource>.<group>/<namespace>/<name>, or <resource>/<namespace>/<name> for the core group.
func ConfigHashKey(gr addonv1alpha1.ConfigGroupResource, ref addonv1alpha1.ConfigReferent) string {
	res := gr.Resource
	if gr.Group != "" {
		res += "." + gr.Group
	}
	return res + "/" + ref.Namespace + "/" + ref.Name
}

// workReady: Applied and Available are True for the work's generation.
func workReady(w *workv1.ManifestWork) bool {
	for _, t := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
		c := meta.FindStatusCondition(w.Status.Conditions, t)
		if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != w.Generation {
			return false
		}
	}
	return true
}
