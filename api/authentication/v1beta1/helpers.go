package v1beta1

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TokenRefreshFraction is how much of a token's life passes before the cluster's agent requests
// a new one (OCM's managed-serviceaccount: "the token will not be rotated unless its remaining
// lifetime is less than 20% of its rotation validity").
const TokenRefreshFraction = 0.8

// OwnsTokenSecret says whether s was made for m: OCM's label LabelIsManagedServiceAccount and an
// owner reference to m's UID. Flotilla writes, and hands out the token of, no other Secret.
func (m *ManagedServiceAccount) OwnsTokenSecret(s *corev1.Secret) bool {
	if s.Labels[LabelIsManagedServiceAccount] != "true" {
		return false
	}
	for _, o := range s.OwnerReferences {
		if o.UID == m.UID && o.Kind == "ManagedServiceAccount" {
			return true
		}
	}
	return false
}

// TokenPending says why m has no token to hand out yet, or "" once its cluster's agent reported
// one: TokenReported True, with status.tokenSecretRef and status.expirationTimestamp. Whether the
// token has expired since is the reader's to check, at its own now.
func (m *ManagedServiceAccount) TokenPending() string {
	if c := meta.FindStatusCondition(m.Status.Conditions, ConditionTypeTokenReported); c == nil || c.Status != metav1.ConditionTrue {
		why := "no TokenReported condition yet: is ManagedClusterAddOn managed-serviceaccount enabled on the cluster?"
		if c != nil {
			why = fmt.Sprintf("TokenReported is %s (%s): %s", c.Status, c.Reason, c.Message)
		}
		return "has no token: " + why
	}
	if m.Status.ExpirationTimestamp == nil || m.Status.TokenSecretRef == nil {
		return "reports a token but no expirationTimestamp or tokenSecretRef"
	}
	return ""
}
