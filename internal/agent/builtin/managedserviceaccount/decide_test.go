package managedserviceaccount

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	authv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"
)

func TestNext(t *testing.T) {
	issued := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	// A token of 10 hours issued at 01:00 is due at 09:00 (80% of its life).
	status := authv1beta1.ManagedServiceAccountStatus{
		ExpirationTimestamp: &metav1.Time{Time: issued.Add(10 * time.Hour)},
		TokenSecretRef:      &authv1beta1.SecretRef{Name: "argocd", LastRefreshTimestamp: metav1.NewTime(issued)},
	}
	withToken := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{ServiceAccountUIDAnnotation: "sa-1"}},
		Data:       map[string][]byte{corev1.ServiceAccountTokenKey: []byte("t")},
	}
	type out struct {
		Due       bool
		RefreshAt time.Time
		Why       string
	}
	for name, tc := range map[string]struct {
		status authv1beta1.ManagedServiceAccountStatus
		secret *corev1.Secret
		sa     types.UID
		now    time.Time
		want   out
	}{
		"a new Secret": {status: status, secret: &corev1.Secret{}, sa: "sa-1", now: issued,
			want: out{Due: true, Why: "the Secret holds no token"}},
		"the ServiceAccount was made again": {status: status, secret: withToken, sa: "sa-2", now: issued,
			want: out{Due: true, Why: "the ServiceAccount was made again since the token was issued"}},
		"no token in the status": {secret: withToken, sa: "sa-1", now: issued,
			want: out{Due: true, Why: "the status records no token"}},
		"fresh": {status: status, secret: withToken, sa: "sa-1", now: issued.Add(time.Hour),
			want: out{RefreshAt: issued.Add(8 * time.Hour)}},
		"a moment before 80%": {status: status, secret: withToken, sa: "sa-1", now: issued.Add(8*time.Hour - time.Second),
			want: out{RefreshAt: issued.Add(8 * time.Hour)}},
		"at 80%": {status: status, secret: withToken, sa: "sa-1", now: issued.Add(8 * time.Hour),
			want: out{Due: true, RefreshAt: issued.Add(8 * time.Hour), Why: "80% of the token's life has passed"}},
		"expired": {status: status, secret: withToken, sa: "sa-1", now: issued.Add(11 * time.Hour),
			want: out{Due: true, RefreshAt: issued.Add(8 * time.Hour), Why: "80% of the token's life has passed"}},
	} {
		t.Run(name, func(t *testing.T) {
			m := &authv1beta1.ManagedServiceAccount{Status: tc.status}
			var got out
			got.Due, got.RefreshAt, got.Why = next(m, tc.secret, tc.sa, tc.now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("next (-want +got):\n%s", diff)
			}
		})
	}
}
