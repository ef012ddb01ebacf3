package webhook

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	authv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"
)

func TestReviewManagedServiceAccount(t *testing.T) {
	clusters := func(_ context.Context, name string) (bool, error) {
		if name == "broken" {
			return false, errors.New("connection refused")
		}
		return name == "cluster1", nil
	}
	msa := func(ns string) *authv1beta1.ManagedServiceAccount {
		return &authv1beta1.ManagedServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "argocd", Namespace: ns}}
	}
	for name, tc := range map[string]struct {
		old, cur *authv1beta1.ManagedServiceAccount
		want     []string // substrings of the one denial, nil when allowed
		wantErr  bool
	}{
		"in a cluster's namespace":     {cur: msa("cluster1")},
		"in another namespace":         {cur: msa("default"), want: []string{`managedserviceaccounts "argocd" in namespace "default"`, "metadata.namespace names no ManagedCluster", "create it in the namespace of the cluster"}},
		"an update is not reviewed":    {old: msa("default"), cur: msa("default")},
		"the lookup fails: no verdict": {cur: msa("broken"), wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ReviewManagedServiceAccount(context.Background(), clusters, tc.old, tc.cur)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if tc.want == nil {
				if diff := cmp.Diff([]string(nil), got); diff != "" {
					t.Fatalf("denials (-want +got):\n%s", diff)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("denials %q, want one", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got[0], w) {
					t.Errorf("denial %q does not say %q", got[0], w)
				}
			}
		})
	}
}
