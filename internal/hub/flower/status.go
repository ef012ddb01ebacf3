package flower

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/conditions"
)

// condition is ConditionSuperLink from what sync returned.
func condition(o Options, deploy *appsv1.Deployment, err error) metav1.Condition {
	c := metav1.Condition{Type: ConditionSuperLink, Status: metav1.ConditionFalse}
	var conflict *conflictError
	switch {
	case errors.As(err, &conflict):
		c.Reason, c.Message = ReasonConflict, err.Error()
	case err != nil:
		c.Reason, c.Message = ReasonFailed, firstLine(err.Error())+forbiddenFix(err)
	case deploy.Status.AvailableReplicas < 1:
		c.Reason = ReasonUnavailable
		c.Message = fmt.Sprintf("Deployment %s/%s has no available replica yet", Namespace, SuperLinkName)
	default:
		host, port := o.hostPort()
		c.Status, c.Reason = metav1.ConditionTrue, ReasonAvailable
		c.Message = fmt.Sprintf("SuperLink %s/%s is available; the clusters reach its Fleet API at %s", Namespace, SuperLinkName,
			net.JoinHostPort(host, strconv.Itoa(port)))
		if !o.Insecure {
			c.Message += fmt.Sprintf(" with TLS (CA certificate in ConfigMap %s/%s)", Namespace, CAConfigMap)
		} else {
			c.Message += " without TLS"
		}
	}
	return c
}

// report sets cond in each ManagedClusterAddOn whose condition differs.
func (r *Reconciler) report(ctx context.Context, mcas []addonv1alpha1.ManagedClusterAddOn, cond metav1.Condition, now time.Time) error {
	var errs []error
	for i := range mcas {
		m := mcas[i].DeepCopy()
		c := cond
		c.ObservedGeneration, c.LastTransitionTime = m.Generation, metav1.NewTime(now)
		old := append([]metav1.Condition(nil), m.Status.Conditions...)
		meta.SetStatusCondition(&m.Status.Conditions, c)
		if conditions.Equal(old, m.Status.Conditions) {
			continue
		}
		if err := r.Client.Status().Update(ctx, m); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("ManagedClusterAddOn %s/%s: %w", m.Namespace, m.Name, err))
		}
	}
	return errors.Join(errs...)
}
