package explain

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// TokenReviews is the Authenticator that asks the API server who holds a token (a TokenReview
// for the API server's own audiences).
func TokenReviews(cs kubernetes.Interface) Authenticator {
	return func(ctx context.Context, token string) (authenticationv1.UserInfo, bool, error) {
		tr := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}
		got, err := cs.AuthenticationV1().TokenReviews().Create(ctx, tr, metav1.CreateOptions{})
		if err != nil {
			return authenticationv1.UserInfo{}, false, err
		}
		return got.Status.User, got.Status.Authenticated, nil
	}
}

// SubjectAccessReviews is the Authorizer that asks the API server whether user, with its groups,
// extra and uid, may act on attrs.
func SubjectAccessReviews(cs kubernetes.Interface) Authorizer {
	return func(ctx context.Context, user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes) (bool, string, error) {
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
			reason = joinReason(reason, got.Status.EvaluationError)
		}
		return got.Status.Allowed && !got.Status.Denied, reason, nil
	}
}

func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
