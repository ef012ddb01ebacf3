package v1beta1

import corev1 "k8s.io/api/core/v1"

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
