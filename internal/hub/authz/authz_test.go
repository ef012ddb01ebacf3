package authz

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func TestReview(t *testing.T) {
	user := authenticationv1.UserInfo{Username: "alice", UID: "u-1", Groups: []string{"team-a"},
		Extra: map[string]authenticationv1.ExtraValue{"scopes": {"a"}}}
	attrs := authorizationv1.ResourceAttributes{Verb: "get", Group: "cluster.open-cluster-management.io", Resource: "placements", Namespace: "ml", Name: "gpu"}
	type answer struct {
		Allowed bool
		Reason  string
	}
	cases := map[string]struct {
		status authorizationv1.SubjectAccessReviewStatus
		want   answer
	}{
		"allowed":                        {status: authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "RBAC: allowed"}, want: answer{true, "RBAC: allowed"}},
		"no opinion":                     {status: authorizationv1.SubjectAccessReviewStatus{}, want: answer{false, ""}},
		"denied":                         {status: authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: "no"}, want: answer{false, "no"}},
		"evaluation error in the reason": {status: authorizationv1.SubjectAccessReviewStatus{Reason: "no rule", EvaluationError: "webhook down"}, want: answer{false, "no rule; webhook down"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cs := fake.NewClientset()
			var asked *authorizationv1.SubjectAccessReview
			cs.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
				asked = a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
				out := asked.DeepCopy()
				out.Status = tc.status
				return true, out, nil
			})
			allowed, reason, err := Review(context.Background(), cs, user, attrs)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, answer{allowed, reason}); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			wantSpec := authorizationv1.SubjectAccessReviewSpec{User: "alice", UID: "u-1", Groups: []string{"team-a"},
				Extra: map[string]authorizationv1.ExtraValue{"scopes": {"a"}}, ResourceAttributes: &attrs}
			if diff := cmp.Diff(wantSpec, asked.Spec); diff != "" {
				t.Errorf("review asked (-want +got):\n%s", diff)
			}
		})
	}
}
