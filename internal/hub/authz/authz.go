package authz

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Review asks the API server, with a SubjectAccessReview, whether user (name, groups, uid and
// extra, as an admission request or a TokenReview gives them) may act on attrs. It returns the
// answer and the authorizer's reason, with any evaluation error, for a refusal's message.
func Review(ctx context.Context, cs kubernetes.Interface, user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes) (bool, string, error) {
	var extra map[string]authorizationv1.ExtraValue
	if len(user.Extra) > 0 {
		extra = make(map[string]authorizationv1.ExtraValue, len(user.Extra))
		for k, v := range user.Extra {
			extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, Groups: user.Groups, UID: user.UID, Extra: extra, ResourceAttributes: &attrs,
	}}
	got, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, "", err
	}
	reason := got.Status.Reason
	if got.Status.EvaluationError != "" && !got.Status.Allowed {
		if reason != "" {
			reason += "; "
		}
		reason += got.Status.EvaluationError
	}
	return got.Status.Allowed && !got.Status.Denied, reason, nil
}
