package explain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/placementview"
	"github.com/flotilla/flotilla/internal/core/scheduler"
)

// PathPrefix starts every path the server answers.
const PathPrefix = "/explain/namespaces/"

// The resource a caller needs permission on.
const (
	Group    = "cluster.open-cluster-management.io"
	Resource = "placements"
)

// Authenticator says who holds a bearer token; ok is false when the token is not valid.
type Authenticator func(ctx context.Context, token string) (user authenticationv1.UserInfo, ok bool, err error)

// Authorizer says whether user may act on attrs, and why (the authorizer's reason).
type Authorizer func(ctx context.Context, user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes) (allowed bool, reason string, err error)

// Handler serves the explanations. All its fields are required.
type Handler struct {
	// Reader reads placements and the fleet; the manager's cached client.
	Reader       client.Reader
	Authenticate Authenticator
	Authorize    Authorizer
	Clock        clock.PassiveClock
}

var _ http.Handler = (*Handler)(nil)

// request is what a path asks for: name is "" for a what-if (POST to the collection).
type request struct {
	namespace, name string
}

// usage says which requests the server answers, for error messages.
const usage = "GET " + PathPrefix + "NAMESPACE/placements/NAME, or POST a Placement to " + PathPrefix + "NAMESPACE/placements"

// ServeHTTP authenticates the caller, authorizes the request and answers with the explanation.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req, ok := parsePath(r.URL.Path)
	if !ok {
		writeError(w, http.StatusNotFound, metav1.StatusReasonNotFound, nil, "no such endpoint %q: %s", r.URL.Path, usage)
		return
	}
	verb := ""
	switch {
	case req.name != "" && r.Method == http.MethodGet:
		verb = "get"
	case req.name == "" && r.Method == http.MethodPost:
		verb = "create"
	default:
		allow := http.MethodPost
		if req.name != "" {
			allow = http.MethodGet
		}
		w.Header().Set("Allow", allow)
		writeError(w, http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, nil, "%s %s is not served: %s", r.Method, r.URL.Path, usage)
		return
	}
	ctx := r.Context()
	user, ok := h.authenticate(w, r)
	if !ok {
		return
	}
	attrs := authorizationv1.ResourceAttributes{Namespace: req.namespace, Verb: verb, Group: Group, Resource: Resource, Name: req.name}
	allowed, reason, err := h.Authorize(ctx, user, attrs)
	if err != nil {
		log.FromContext(ctx).Error(err, "SubjectAccessReview failed", "user", user.Username, "namespace", req.namespace, "name", req.name)
		writeError(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, nil, "checking the permissions of %q: %v; try again", user.Username, err)
		return
	}
	if !allowed {
		what := fmt.Sprintf("placements.%s %q in namespace %q", Group, req.name, req.namespace)
		if req.name == "" {
			what = fmt.Sprintf("placements.%s in namespace %q", Group, req.namespace)
		}
		if reason == "" {
			reason = "no RBAC rule allows it"
		}
		writeError(w, http.StatusForbidden, metav1.StatusReasonForbidden, details(req),
			"user %q cannot %s %s (%s): grant it a Role with verb %q on placements in that namespace", user.Username, verb, what, reason, verb)
		return
	}
	var p *clusterv1beta1.Placement
	if req.name != "" {
		p = &clusterv1beta1.Placement{}
		if err := h.Reader.Get(ctx, client.ObjectKey{Namespace: req.namespace, Name: req.name}, p); err != nil {
			if apierrors.IsNotFound(err) {
				writeError(w, http.StatusNotFound, metav1.StatusReasonNotFound, details(req),
					"placement %s/%s is not on the hub: list the namespace's placements with `flotilla get placements -n %s`, or POST the Placement to %s%s/placements to explain it without creating it",
					req.namespace, req.name, req.namespace, PathPrefix, req.namespace)
				return
			}
			writeError(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, details(req), "reading placement %s/%s: %v", req.namespace, req.name, err)
			return
		}
	} else {
		p, err = decodePlacement(r, req.namespace)
		if err != nil {
			writeError(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, &metav1.StatusDetails{Group: Group, Kind: "Placement"}, "%v", err)
			return
		}
		req.name = p.Name
	}
	out, err := h.explain(ctx, p)
	if err != nil {
		writeError(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, details(req), "reading the fleet to explain placement %s/%s: %v", req.namespace, req.name, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
}

// authenticate returns the caller named by the request's bearer token, or answers 401.
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request) (authenticationv1.UserInfo, bool) {
	const fix = "send a token of the hub's API server in the header Authorization: Bearer TOKEN (for a service account, `kubectl create token NAME -n NAMESPACE`); client certificates are not accepted"
	auth := r.Header.Get("Authorization")
	scheme, token, _ := strings.Cut(auth, " ")
	token = strings.TrimSpace(token)
	if auth == "" || !strings.EqualFold(scheme, "Bearer") || token == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="flotilla-hub"`)
		writeError(w, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, nil, "no bearer token: %s", fix)
		return authenticationv1.UserInfo{}, false
	}
	user, ok, err := h.Authenticate(r.Context(), token)
	if err != nil {
		log.FromContext(r.Context()).Error(err, "TokenReview failed")
		writeError(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, nil, "authenticating the token with the API server: %v; try again", err)
		return authenticationv1.UserInfo{}, false
	}
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="flotilla-hub"`)
		writeError(w, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, nil, "the API server does not accept the bearer token (expired or unknown): %s", fix)
		return authenticationv1.UserInfo{}, false
	}
	return user, true
}

// explain schedules p against the fleet in the cache.
func (h *Handler) explain(ctx context.Context, p *clusterv1beta1.Placement) (placementview.Output, error) {
	objs, err := placementview.ListFleet(ctx, h.Reader, p.Namespace)
	if err != nil {
		return placementview.Output{}, err
	}
	res := scheduler.New(h.Clock).Schedule(p, placementview.SnapshotFrom(objs, p.Namespace, p.Name))
	return placementview.NewOutput(p.Namespace, p.Name, &res), nil
}

// parsePath reads NS (and NAME) from /explain/namespaces/NS/placements[/NAME].
func parsePath(path string) (request, bool) {
	rest, ok := strings.CutPrefix(path, PathPrefix)
	if !ok {
		return request{}, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] != Resource {
		return request{}, false
	}
	req := request{namespace: parts[0]}
	if len(parts) == 3 {
		if parts[2] == "" {
			return request{}, false
		}
		req.name = parts[2]
	}
	return req, true
}

func details(req request) *metav1.StatusDetails {
	return &metav1.StatusDetails{Group: Group, Kind: "Placement", Name: req.name}
}

// writeError answers with a metav1.Status, as the API server does.
func writeError(w http.ResponseWriter, code int, reason metav1.StatusReason, d *metav1.StatusDetails, format string, args ...any) {
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"},
		Status:   metav1.StatusFailure, Message: fmt.Sprintf(format, args...), Reason: reason, Details: d, Code: int32(code),
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(st)
}

// errBodyTooLarge is returned for bodies over maxBody.
var errBodyTooLarge = errors.New("the body is larger than 1 MiB: a Placement is far smaller; send only the Placement")
