package webhook

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/hub/authz"
)

// Paths the webhooks are served at.
const (
	ManagedClusterPath = "/validate-managedclusters"
	BindingPath        = "/validate-managedclustersetbindings"
)

// SubjectAccessReviews is the hub's Authorizer: it asks the API server whether user holds p.
func SubjectAccessReviews(cs kubernetes.Interface) Authorizer {
	return func(ctx context.Context, user authenticationv1.UserInfo, p Permission) (bool, error) {
		allowed, _, err := authz.Review(ctx, cs, user, authorizationv1.ResourceAttributes{
			Verb: p.Verb, Group: p.Group, Resource: p.Resource, Subresource: p.Subresource, Name: p.Name, Namespace: p.Namespace,
		})
		return allowed, err
	}
}

// review is a decision function over an old (nil when creating) and a new object.
type review[T any] func(ctx context.Context, can Authorizer, user authenticationv1.UserInfo, old, cur *T) ([]string, error)

// handler turns a review into an admission handler that decodes the objects as T.
func handler[T any, PT interface {
	*T
	runtime.Object
}](dec admission.Decoder, can Authorizer, decide review[T]) admission.Handler {
	return admission.HandlerFunc(func(ctx context.Context, req admission.Request) admission.Response {
		var old *T
		switch req.Operation {
		case admissionv1.Create:
		case admissionv1.Update:
			old = new(T)
			if err := dec.DecodeRaw(req.OldObject, PT(old)); err != nil {
				return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding the old object: %w", err))
			}
		default:
			return admission.Allowed("")
		}
		cur := new(T)
		if err := dec.Decode(req, PT(cur)); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding the object: %w", err))
		}
		denials, err := decide(ctx, can, req.UserInfo, old, cur)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		if len(denials) > 0 {
			return admission.Denied(strings.Join(denials, "; and "))
		}
		return admission.Allowed("")
	})
}

// ManagedClusterHandler validates writes to ManagedClusters and to their status (the claims
// webhook): the name of a new one (ReviewClusterName), what a write needs
// (ReviewManagedCluster), and that only hub, the hub's user name, changes the hub's fencing
// annotations (hubAnnotationEdits).
func ManagedClusterHandler(s *runtime.Scheme, can Authorizer, namespaces NamespaceLookup, hub string) admission.Handler {
	return handler(admission.NewDecoder(s), can, func(ctx context.Context, can Authorizer, user authenticationv1.UserInfo, old, cur *clusterv1.ManagedCluster) ([]string, error) {
		var denials []string
		before := old
		if old == nil {
			d, err := ReviewClusterName(ctx, namespaces, cur.Name)
			if err != nil {
				return nil, err
			}
			denials = d
			before = &clusterv1.ManagedCluster{}
		}
		denials = append(denials, hubAnnotationEdits(fmt.Sprintf("managedclusters %q", cur.Name), hub, user, before, cur)...)
		d, err := ReviewManagedCluster(ctx, can, user, old, cur)
		return append(denials, d...), err
	})
}

// BindingHandler validates writes to ManagedClusterSetBindings.
func BindingHandler(s *runtime.Scheme, can Authorizer) admission.Handler {
	return handler[clusterv1beta2.ManagedClusterSetBinding](admission.NewDecoder(s), can, ReviewBinding)
}
