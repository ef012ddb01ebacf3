package mcpserver

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
)

// argError is a bad argument: it names the argument and the fix.
func argError(arg, format string, a ...any) error {
	return fmt.Errorf("argument %q: %s", arg, fmt.Sprintf(format, a...))
}

// hubError says why the hub refused to act on what ("listing placements in namespace ml"), and
// the fix; notFound is the fix of a missing object ("list them with list_placements"), when what
// names one. Refusals are never turned into empty results: a caller without rights must know.
func hubError(err error, what, notFound string) error {
	var status apierrors.APIStatus
	msg := err.Error()
	if errors.As(err, &status) && status.Status().Message != "" {
		msg = status.Status().Message
	}
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("permission denied %s: the hub's RBAC refused your kubeconfig identity (%s); "+
			"ask the hub's administrator for a Role or ClusterRole that allows it, or start flotilla mcp with a kubeconfig "+
			"(--kubeconfig, --context) whose identity has it", what, msg)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%s: the hub did not accept the kubeconfig's credentials (%s); renew them, or start flotilla mcp "+
			"with another kubeconfig (--kubeconfig, --context)", what, msg)
	case apierrors.IsNotFound(err) && notFound != "":
		return fmt.Errorf("%s: not found on the hub (%s); %s", what, msg, notFound)
	case meta.IsNoMatchError(err):
		return fmt.Errorf("%s: the hub does not serve this kind (%v); install Flotilla's CRDs with `flotilla install crds`", what, err)
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		// A strictly decoded patch's error quotes the whole patched object before the field.
		if _, field, ok := strings.Cut(msg, "strict decoding error: "); ok {
			msg = "strict decoding error: " + field
		}
		return fmt.Errorf("%s: the hub refused it as invalid: %s; fix the fields the message names and call again", what, msg)
	case apierrors.IsConflict(err):
		return fmt.Errorf("%s: the object changed while it was written (%s); call again", what, msg)
	}
	return fmt.Errorf("%s: %w", what, err)
}
