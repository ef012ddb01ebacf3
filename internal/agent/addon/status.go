package addon

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
)

// Conditions the agent writes on a ManagedClusterAddOn, with OCM's types and reasons.
const (
	// ConditionClusterCertificateRotated says whether the add-on's last certificate was issued and stored.
	ConditionClusterCertificateRotated  = "ClusterCertificateRotated"
	ReasonClientCertificateUpdated      = "ClientCertificateUpdated"
	ReasonClientCertificateUpdateFailed = "ClientCertificateUpdateFailed"

	// Reasons of Available for an add-on whose health is its Lease.
	ReasonLeaseUpdated  = "ManagedClusterAddOnLeaseUpdated"
	ReasonLeaseStopped  = "ManagedClusterAddOnLeaseUpdateStopped"
	ReasonLeaseNotFound = "ManagedClusterAddOnLeaseNotFound"
)

// hasCondition reports whether mca already says cond (its transition time aside).
func hasCondition(mca *addonv1alpha1.ManagedClusterAddOn, cond metav1.Condition) bool {
	c := meta.FindStatusCondition(mca.Status.Conditions, cond.Type)
	return c != nil && c.Status == cond.Status && c.Reason == cond.Reason && c.Message == cond.Message &&
		c.ObservedGeneration == mca.Generation
}

// setCondition writes cond in mca's status on the hub unless it says so already. The patch
// carries the status's resourceVersion: a status someone else changed meanwhile is not
// overwritten, and the next round, with the new status, writes again.
func (a *Agent) setCondition(ctx context.Context, c client.Client, mca *addonv1alpha1.ManagedClusterAddOn, cond metav1.Condition) error {
	if hasCondition(mca, cond) {
		return nil
	}
	cond.ObservedGeneration = mca.Generation
	cond.LastTransitionTime = metav1.NewTime(a.opts.Clock.Now())
	updated := mca.DeepCopy()
	meta.SetStatusCondition(&updated.Status.Conditions, cond)
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if err := c.Status().Patch(ctx, updated, client.MergeFromWithOptions(mca, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("setting condition %s=%s of ManagedClusterAddOn %s/%s on the hub: %w", cond.Type, cond.Status, mca.Namespace, mca.Name, err)
	}
	*mca = *updated
	return nil
}
