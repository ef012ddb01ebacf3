package managedserviceaccount

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	authv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"
)

// ServiceAccountUIDAnnotation on a token Secret is the UID of the ServiceAccount the token was
// issued for: a ServiceAccount deleted and made again has a new UID, and the old tokens no longer
// authenticate.
const ServiceAccountUIDAnnotation = "authentication.flotilla.io/serviceaccount-uid"

// next says whether a new token is due for m, whose Secret on the hub is secret, issued for the
// ServiceAccount sa, and otherwise when it will be (refreshAt), with why a token is due.
func next(m *authv1beta1.ManagedServiceAccount, secret *corev1.Secret, sa types.UID, now time.Time) (due bool, refreshAt time.Time, why string) {
	switch {
	case len(secret.Data[corev1.ServiceAccountTokenKey]) == 0:
		return true, time.Time{}, "the Secret holds no token"
	case secret.Annotations[ServiceAccountUIDAnnotation] != string(sa):
		return true, time.Time{}, "the ServiceAccount was made again since the token was issued"
	case m.Status.ExpirationTimestamp == nil || m.Status.TokenSecretRef == nil:
		return true, time.Time{}, "the status records no token"
	}
	last := m.Status.TokenSecretRef.LastRefreshTimestamp.Time
	life := m.Status.ExpirationTimestamp.Sub(last)
	refreshAt = last.Add(time.Duration(float64(life) * authv1beta1.TokenRefreshFraction))
	if !now.Before(refreshAt) {
		return true, refreshAt, "80% of the token's life has passed"
	}
	return false, refreshAt, ""
}
