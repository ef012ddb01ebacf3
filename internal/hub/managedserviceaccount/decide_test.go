package managedserviceaccount

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	authv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	msa := func(name string, ttl *int32) authv1beta1.ManagedServiceAccount {
		return authv1beta1.ManagedServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "cluster1",
			CreationTimestamp: metav1.NewTime(now.Add(-time.Minute))}, Spec: authv1beta1.ManagedServiceAccountSpec{TTLSecondsAfterCreation: ttl}}
	}
	deleting := msa("going", nil)
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	type out struct {
		Expired, Orphans []string
		Bind             bool
		Requeue          time.Duration
	}
	for name, tc := range map[string]struct {
		msas    []authv1beta1.ManagedServiceAccount
		cluster bool
		want    out
	}{
		"none: no binding":                {cluster: true},
		"one in a cluster's namespace":    {msas: []authv1beta1.ManagedServiceAccount{msa("a", nil)}, cluster: true, want: out{Bind: true}},
		"not a cluster's namespace":       {msas: []authv1beta1.ManagedServiceAccount{msa("a", nil)}, want: out{Orphans: []string{"a"}}},
		"only one being deleted: unbound": {msas: []authv1beta1.ManagedServiceAccount{deleting}, cluster: true},
		"ttl passed: deleted; ttl to come: requeued": {
			msas:    []authv1beta1.ManagedServiceAccount{msa("old", ptr.To[int32](60)), msa("young", ptr.To[int32](90))},
			cluster: true,
			want:    out{Expired: []string{"old"}, Bind: true, Requeue: 30 * time.Second}},
		"the only one expired: unbound": {
			msas: []authv1beta1.ManagedServiceAccount{msa("old", ptr.To[int32](30))}, cluster: true,
			want: out{Expired: []string{"old"}}},
	} {
		t.Run(name, func(t *testing.T) {
			p := decide(tc.msas, tc.cluster, now)
			got := out{Expired: p.expired, Orphans: p.orphans, Bind: p.bind, Requeue: p.requeue}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decide (-want +got):\n%s", diff)
			}
		})
	}
}
