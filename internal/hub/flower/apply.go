package flower

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
)

// annotationSpecHash records the hash of what the hub wrote: an object is written again when what
// the hub wants changes (the API server adds defaults, so the live object is not compared).
const annotationSpecHash = "flower.flotilla.io/spec-hash"

// conflictError is an object the hub would write that exists and is not Flotilla's.
type conflictError struct{ kind, key string }

func (e *conflictError) Error() string {
	return fmt.Sprintf("%s %s exists and is not Flotilla's (no label %s=%s): the hub leaves it alone; delete or rename it so that the hub can make its own",
		e.kind, e.key, builtinaddon.Label, AddonName)
}

// keyOf is namespace/name, or name.
func keyOf(o client.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

// kindOf is the Go type's name: the kind of the object.
func kindOf(o client.Object) string { return reflect.TypeOf(o).Elem().Name() }

// newLike is an empty object of o's type.
func newLike(o client.Object) client.Object {
	return reflect.New(reflect.TypeOf(o).Elem()).Interface().(client.Object)
}

// specHash hashes everything the hub sets on o.
func specHash(o client.Object) (string, error) {
	data, err := json.Marshal(o)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// ensure makes want exist as the hub wants it: created when missing, replaced when what the hub
// wants changed since it last wrote it; one that is not Flotilla's is a *conflictError.
func (r *Reconciler) ensure(ctx context.Context, want client.Object) error {
	hash, err := specHash(want)
	if err != nil {
		return err
	}
	ann := want.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[annotationSpecHash] = hash
	want.SetAnnotations(ann)
	got := newLike(want)
	err = r.Reader.Get(ctx, client.ObjectKeyFromObject(want), got)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.Client.Create(ctx, want); err != nil {
			return fmt.Errorf("creating %s %s: %w", kindOf(want), keyOf(want), err)
		}
		ctrl.LoggerFrom(ctx).Info("created", "kind", kindOf(want), "name", keyOf(want))
		return nil
	case err != nil:
		return fmt.Errorf("reading %s %s: %w", kindOf(want), keyOf(want), err)
	case !owned(got.GetLabels()):
		return &conflictError{kind: kindOf(want), key: keyOf(want)}
	case got.GetAnnotations()[annotationSpecHash] == hash:
		return nil
	}
	want.SetResourceVersion(got.GetResourceVersion())
	if err := r.Client.Update(ctx, want); err != nil {
		return fmt.Errorf("updating %s %s: %w", kindOf(want), keyOf(want), err)
	}
	ctrl.LoggerFrom(ctx).Info("updated", "kind", kindOf(want), "name", keyOf(want))
	return nil
}

// remove deletes the object of o's type and key if the hub made it.
func (r *Reconciler) remove(ctx context.Context, o client.Object) error {
	got := newLike(o)
	err := r.Reader.Get(ctx, client.ObjectKeyFromObject(o), got)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s %s: %w", kindOf(o), keyOf(o), err)
	}
	if !owned(got.GetLabels()) {
		ctrl.LoggerFrom(ctx).V(1).Info("not Flotilla's: left as it is", "kind", kindOf(o), "name", keyOf(o))
		return nil
	}
	uid := got.GetUID()
	err = r.Client.Delete(ctx, got, &client.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s %s: %w", kindOf(o), keyOf(o), err)
	}
	ctrl.LoggerFrom(ctx).Info("deleted", "kind", kindOf(o), "name", keyOf(o))
	return nil
}

// ensureNamespace makes Namespace if it is missing (it is shared: one that exists is used as it
// is), with the restricted Pod Security Standard enforced, which the SuperLink meets.
func (r *Reconciler) ensureNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{}
	err := r.Reader.Get(ctx, client.ObjectKey{Name: Namespace}, ns)
	if apierrors.IsNotFound(err) {
		labels := ownerLabels()
		labels["pod-security.kubernetes.io/enforce"] = "restricted"
		err = r.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace, Labels: labels}})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating Namespace %s: %w", Namespace, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Namespace %s: %w", Namespace, err)
	}
	if !ns.DeletionTimestamp.IsZero() {
		return fmt.Errorf("namespace %s is being deleted: the hub makes it again once it is gone", Namespace)
	}
	return nil
}

// forbiddenFix is added to a refusal: what the hub's identity lacks and where it is granted.
func forbiddenFix(err error) string {
	if !apierrors.IsForbidden(err) {
		return ""
	}
	return "; grant the hub's identity the Role flotilla-hub in " + Namespace +
		" (config/rbac/role.yaml; the hub chart makes it with flowerAddon.enabled=true)"
}

// firstLine keeps messages on one line.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
