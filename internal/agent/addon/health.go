package addon

import (
	"context"
	"errors"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
)

// leaseHealth is the Available condition of an add-on whose health is its Lease, at now:
// renewed is the Lease's last renewal (nil: there is no Lease, or it was never renewed, as
// exists says). It also returns how long the condition holds if the Lease is not renewed again:
// the time left in the window while the Lease is fresh, zero otherwise.
//
// OCM reports a Lease older than its window as Available=False; Flotilla says Unknown, since an
// agent that stopped renewing may be gone or cut off rather than broken, with OCM's reason.
func leaseHealth(addon string, exists bool, renewed *time.Time, now time.Time, window time.Duration) (metav1.Condition, time.Duration) {
	cond := metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable}
	switch {
	case !exists:
		cond.Status, cond.Reason = metav1.ConditionUnknown, ReasonLeaseNotFound
		cond.Message = fmt.Sprintf("The status of %s add-on is unknown: its agent has no Lease %s in its install namespace.", addon, addon)
		return cond, 0
	case renewed != nil && now.Before(renewed.Add(window)):
		cond.Status, cond.Reason = metav1.ConditionTrue, ReasonLeaseUpdated
		cond.Message = fmt.Sprintf("%s add-on is available.", addon)
		return cond, renewed.Add(window).Sub(now)
	}
	cond.Status, cond.Reason = metav1.ConditionUnknown, ReasonLeaseStopped
	cond.Message = fmt.Sprintf("%s add-on is not available: its agent has not renewed its Lease for %s.", addon, window)
	return cond, 0
}

// usesLease reports whether the agent judges an add-on's health by its Lease: health check mode
// Lease, or none set. Customized leaves Available to the add-on's own controller.
func usesLease(mca *addonv1alpha1.ManagedClusterAddOn) bool {
	return mca.Status.HealthCheck.Mode == "" || mca.Status.HealthCheck.Mode == addonv1alpha1.HealthCheckModeLease
}

// healthStep reads the Lease of every add-on whose health is its Lease and writes its Available
// condition when that changed. It runs again at HealthSyncInterval, or at the moment the
// freshest-looking Lease would turn stale if that comes first.
func (a *Agent) healthStep(ctx context.Context) (time.Duration, error) {
	v := a.view.Get()
	if v == nil {
		return idle, nil
	}
	mcas, err := a.addOns(ctx, v)
	if err != nil {
		return 0, err
	}
	next := a.opts.HealthSyncInterval
	var errs []error
	for i := range mcas {
		mca := &mcas[i]
		if !mca.DeletionTimestamp.IsZero() || !usesLease(mca) || a.builtIn(mca.Name) {
			continue
		}
		ns := InstallNamespace(mca)
		exists, renewed, err := a.leaseRenewal(ctx, ns, mca.Name)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading Lease %s/%s of add-on %s on the spoke: %w", ns, mca.Name, mca.Name, err))
			continue
		}
		cond, holds := leaseHealth(mca.Name, exists, renewed, a.opts.Clock.Now(), a.leaseWindow())
		if holds > 0 {
			next = min(next, holds)
		}
		if err := a.setCondition(ctx, v.hub.Client, mca, cond); err != nil {
			errs = append(errs, err)
		}
	}
	return next, errors.Join(errs...)
}

// leaseRenewal reads an add-on's Lease on the spoke: whether it exists and its last renewal.
func (a *Agent) leaseRenewal(ctx context.Context, ns, name string) (bool, *time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	l, err := a.spoke.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, nil, nil
	case err != nil:
		return false, nil, err
	}
	return true, renewTime(l), nil
}

func renewTime(l *coordinationv1.Lease) *time.Time {
	if l.Spec.RenewTime == nil {
		return nil
	}
	t := l.Spec.RenewTime.Time
	return &t
}
