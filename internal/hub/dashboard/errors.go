package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
)

// LoginPath is where a viewer without a valid credential is sent.
const LoginPath = "/login"

// apiError is an error the API answers with: an HTTP status and a message naming what failed and
// the fix. Login is set on 401 answers.
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"error"`
	Login   string `json:"login,omitempty"`
}

func (e *apiError) Error() string { return e.Message }

func badRequest(format string, a ...any) *apiError {
	return &apiError{Code: http.StatusBadRequest, Message: fmt.Sprintf(format, a...)}
}

func badParam(param, format string, a ...any) *apiError {
	return &apiError{Code: http.StatusBadRequest, Message: fmt.Sprintf("parameter %q: %s", param, fmt.Sprintf(format, a...))}
}

func notFound(format string, a ...any) *apiError {
	return &apiError{Code: http.StatusNotFound, Message: fmt.Sprintf(format, a...)}
}

func unauthorized(msg string) *apiError {
	return &apiError{Code: http.StatusUnauthorized, Message: msg, Login: LoginPath}
}

// hubError turns an error of the hub's API server into the API's answer for what ("listing
// managedclusters"): 401 sends the viewer to log in, 403 says what their identity may not do.
// Refusals are never turned into empty data.
func hubError(err error, what string) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	msg := err.Error()
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		msg = status.Status().Message
	}
	switch {
	case apierrors.IsUnauthorized(err):
		return unauthorized(fmt.Sprintf("%s: the hub did not accept your credentials (%s): log in again", what, msg))
	case apierrors.IsForbidden(err):
		return &apiError{Code: http.StatusForbidden, Message: fmt.Sprintf("permission denied %s: the hub's RBAC refused your identity (%s); "+
			"ask the hub's administrator for a Role or ClusterRole that allows it", what, msg)}
	case apierrors.IsBadRequest(err) && strings.Contains(msg, "continue"):
		return badParam("continue", "is not a token this dashboard gave (%s): start from the first page, without continue", msg)
	case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
		return badParam("continue", "the page token has expired (%s): start again from the first page, without continue", msg)
	case apierrors.IsBadRequest(err) || apierrors.IsInvalid(err):
		return badRequest("%s: the hub refused the request (%s)", what, msg)
	case apierrors.IsNotFound(err):
		return notFound("%s: not found on the hub (%s)", what, msg)
	case meta.IsNoMatchError(err):
		return notFound("%s: the hub does not serve this kind (%v); install Flotilla's CRDs with `flotilla install crds`", what, err)
	}
	return &apiError{Code: http.StatusBadGateway, Message: fmt.Sprintf("%s: %v", what, err)}
}

// writeJSON writes v as JSON with code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, e *apiError) { writeJSON(w, e.Code, e) }
