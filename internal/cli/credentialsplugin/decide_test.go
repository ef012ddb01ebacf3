package credentialsplugin

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	authv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
)

func TestClusterName(t *testing.T) {
	type out struct{ Name, Version, Err string }
	for name, tc := range map[string]struct {
		in   string
		want out
	}{
		"v1 with the extension": {in: `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false,"cluster":{"server":"https://a","config":{"clusterName":"gpu-east"}}}}`,
			want: out{Name: "gpu-east", Version: "client.authentication.k8s.io/v1"}},
		"v1beta1":      {in: `{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","spec":{"cluster":{"config":{"clusterName":"a"}}}}`, want: out{Name: "a", Version: "client.authentication.k8s.io/v1beta1"}},
		"unset":        {in: "", want: out{Err: "KUBERNETES_EXEC_INFO is not set"}},
		"not json":     {in: "{", want: out{Err: "is not an ExecCredential"}},
		"another kind": {in: `{"apiVersion":"v1","kind":"Pod"}`, want: out{Err: "holds v1 Pod, want an ExecCredential"}},
		"no cluster info": {in: `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{}}`,
			want: out{Err: "set provideClusterInfo: true"}},
		"no extension": {in: `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"cluster":{"server":"https://a"}}}`,
			want: out{Err: "set provideClusterInfo: true"}},
		"a config of another shape": {in: `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"cluster":{"config":["x"]}}}`,
			want: out{Err: `is not {"clusterName": NAME}`}},
		"no cluster name": {in: `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"cluster":{"config":{}}}}`,
			want: out{Err: `clusterName "" is not a cluster name`}},
		"a path as cluster name": {in: `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"cluster":{"config":{"clusterName":"../kube-system"}}}}`,
			want: out{Err: `clusterName "../kube-system" is not a cluster name`}},
	} {
		t.Run(name, func(t *testing.T) {
			var got out
			var err error
			got.Name, got.Version, err = clusterName(tc.in)
			if err != nil {
				got.Err = err.Error()
				if tc.want.Err != "" && strings.Contains(got.Err, tc.want.Err) {
					got.Err = tc.want.Err
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("clusterName (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCredential(t *testing.T) {
	issued := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	accepted := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "gpu-east"}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
	denied := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "gpu-east"}}
	deleting := accepted.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: issued}
	reported := func(status metav1.ConditionStatus) *authv1beta1.ManagedServiceAccount {
		return &authv1beta1.ManagedServiceAccount{
			ObjectMeta: metav1.ObjectMeta{Namespace: "gpu-east", Name: "argocd", UID: "msa-1"},
			Status: authv1beta1.ManagedServiceAccountStatus{
				Conditions:          []metav1.Condition{{Type: authv1beta1.ConditionTypeTokenReported, Status: status, Reason: "R", Message: "m"}},
				ExpirationTimestamp: &metav1.Time{Time: issued.Add(10 * time.Hour)},
				TokenSecretRef:      &authv1beta1.SecretRef{Name: "argocd", LastRefreshTimestamp: metav1.NewTime(issued)},
			},
		}
	}
	secret := func(token string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "gpu-east", Name: "argocd",
			Labels:          map[string]string{authv1beta1.LabelIsManagedServiceAccount: "true"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "ManagedServiceAccount", UID: "msa-1"}}},
			Data: map[string][]byte{corev1.ServiceAccountTokenKey: []byte(token)}}
	}
	theirs := secret("t")
	theirs.OwnerReferences[0].UID = "another"
	type out struct {
		Token string
		Again time.Time
		Err   string
	}
	for name, tc := range map[string]struct {
		mc   *clusterv1.ManagedCluster
		m    *authv1beta1.ManagedServiceAccount
		s    *corev1.Secret
		now  time.Time
		want out
	}{
		"fresh: ask again at 80% of its life": {mc: accepted, m: reported("True"), s: secret("t"), now: issued.Add(time.Hour),
			want: out{Token: "t", Again: issued.Add(8 * time.Hour)}},
		"due and not rotated yet: ask again in a minute": {mc: accepted, m: reported("True"), s: secret("t"), now: issued.Add(9 * time.Hour),
			want: out{Token: "t", Again: issued.Add(9*time.Hour + time.Minute)}},
		"a minute before expiry: ask again at expiry": {mc: accepted, m: reported("True"), s: secret("t"), now: issued.Add(10*time.Hour - 30*time.Second),
			want: out{Token: "t", Again: issued.Add(10 * time.Hour)}},
		"expired":           {mc: accepted, m: reported("True"), s: secret("t"), now: issued.Add(10 * time.Hour), want: out{Err: "expired at 2026-12-06T11:00:00Z"}},
		"not accepted":      {mc: denied, m: reported("True"), s: secret("t"), now: issued, want: out{Err: "cluster gpu-east is not accepted"}},
		"being deleted":     {mc: deleting, m: reported("True"), s: secret("t"), now: issued, want: out{Err: "cluster gpu-east is being deleted"}},
		"no token reported": {mc: accepted, m: reported("False"), s: secret("t"), now: issued, want: out{Err: "has no token: TokenReported is False (R): m"}},
		"another's Secret":  {mc: accepted, m: reported("True"), s: theirs, now: issued, want: out{Err: "was not made for ManagedServiceAccount gpu-east/argocd"}},
		"an empty Secret":   {mc: accepted, m: reported("True"), s: secret(""), now: issued, want: out{Err: "holds no token yet"}},
	} {
		t.Run(name, func(t *testing.T) {
			var got out
			var err error
			got.Token, got.Again, err = credential(tc.mc, tc.m, tc.s, tc.now)
			if err != nil {
				got.Err = err.Error()
				if tc.want.Err != "" && strings.Contains(got.Err, tc.want.Err) {
					got.Err = tc.want.Err
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("credential (-want +got):\n%s", diff)
			}
		})
	}
}
