package dynamicscoring

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dsv1alpha1 "github.com/flotilla/flotilla/api/dynamicscoring/v1alpha1"
)

// Reasons of the Accepted condition.
const (
	ReasonAccepted             = "Accepted"
	ReasonNamespaceNotAccepted = "NamespaceNotAccepted"
)

// The hub's flags of dynamic scoring, named in messages.
const (
	// NamespaceFlag names the namespace of DynamicScorers.
	NamespaceFlag = "--dynamic-scoring-namespace"
	// AllowLocalFlag lets scorers' URLs reach loopback and link-local addresses.
	AllowLocalFlag = "--dynamic-scoring-allow-local-addresses"
)

func (r *ScorerReconciler) namespace() string {
	if r.Namespace == "" {
		return DefaultNamespace
	}
	return r.Namespace
}

// refused is the Accepted condition of a scorer outside the hub's namespace ns.
func refused(s *dsv1alpha1.DynamicScorer, ns string) metav1.Condition {
	return metav1.Condition{Type: dsv1alpha1.ConditionAccepted, Status: metav1.ConditionFalse, Reason: ReasonNamespaceNotAccepted,
		ObservedGeneration: s.Generation,
		Message: fmt.Sprintf("DynamicScorer %s/%s: metadata.namespace %q is not the namespace the hub accepts DynamicScorers from (%q, hub flag %s): "+
			"the hub neither checks it nor gives it to agents; create it in namespace %s, or ask the hub's administrator to set %s=%s",
			s.Namespace, s.Name, s.Namespace, ns, NamespaceFlag, ns, NamespaceFlag, s.Namespace)}
}

// refuse marks a scorer outside the hub's namespace Inactive and not Accepted, once.
func (r *ScorerReconciler) refuse(ctx context.Context, s *dsv1alpha1.DynamicScorer) error {
	orig := s.DeepCopy()
	c := refused(s, r.namespace())
	c.LastTransitionTime = metav1.NewTime(r.Clock.Now())
	s.Status.HealthStatus = dsv1alpha1.ScorerHealthInactive
	meta.SetStatusCondition(&s.Status.Conditions, c)
	if equality.Semantic.DeepEqual(orig.Status, s.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, s, client.MergeFrom(orig)); err != nil {
		return client.IgnoreNotFound(err)
	}
	r.Recorder.Eventf(s, nil, "Warning", ReasonNamespaceNotAccepted, "Accept", "%s", c.Message)
	return nil
}
