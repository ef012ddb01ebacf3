package builtin

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
)

// Reasons of the Available condition of a built-in add-on.
const (
	ReasonRunning = "BuiltInAddOnRunning"
	ReasonFailed  = "BuiltInAddOnFailed"
)

// health is the Available condition of an add-on's run.
func health(r *run) metav1.Condition {
	c := metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable, Status: metav1.ConditionTrue, Reason: ReasonRunning,
		Message: "built into flotilla agent; running"}
	if r != nil && r.exited() && r.err != nil {
		c.Status, c.Reason = metav1.ConditionFalse, ReasonFailed
		c.Message = fmt.Sprintf("built into flotilla agent; its last run failed: %v (it is started again every %s)", r.err, RestartBackoff)
	}
	return c
}

// report writes the add-on's health check mode and Available condition into its
// ManagedClusterAddOn's status when they changed. It reads the add-on afresh (the watch may lag
// behind other controllers' writes to the same conditions) and patches that version.
func (m *Manager) report(ctx context.Context, hub client.Client, cached *addonv1alpha1.ManagedClusterAddOn, r *run) error {
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := hub.Get(ctx, client.ObjectKeyFromObject(cached), mca); err != nil {
		return client.IgnoreNotFound(err)
	}
	orig := mca.DeepCopy()
	mca.Status.HealthCheck.Mode = addonv1alpha1.HealthCheckModeCustomized
	c := health(r)
	c.ObservedGeneration = mca.Generation
	c.LastTransitionTime = metav1.NewTime(m.clock.Now().Truncate(time.Second))
	meta.SetStatusCondition(&mca.Status.Conditions, c)
	if equality.Semantic.DeepEqual(orig.Status, mca.Status) {
		return nil
	}
	// With the resourceVersion: other controllers write conditions of the same list.
	if err := hub.Status().Patch(ctx, mca, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("reporting the health of built-in add-on %s in ManagedClusterAddOn %s/%s: %w", mca.Name, mca.Namespace, mca.Name, err)
	}
	return nil
}
