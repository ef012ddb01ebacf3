package explain

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla/flotilla/internal/hub/authz"
)

// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create

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
		return authz.Review(ctx, cs, user, attrs)
	}
}
