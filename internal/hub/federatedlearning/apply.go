package federatedlearning

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
)

// HashAnnotation holds the hash of what the controller last wrote: the API server adds defaults
// to what it stores, so the object is updated only when what the controller wants changed.
const HashAnnotation = "federation-ai.flotilla.io/spec-hash"

// hashOf hashes an object as the controller renders it (before the API server's defaults).
func hashOf(obj client.Object) string {
	raw, err := json.Marshal(obj)
	if err != nil {
		panic(err) // typed API objects always marshal
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

// mine says whether the controller made obj for fl: in fl's namespace through the controller
// reference, in a cluster's namespace through fl's UID label.
func mine(fl *flv1alpha1.FederatedLearning, obj client.Object) bool {
	if obj.GetNamespace() == fl.Namespace {
		return metav1.IsControlledBy(obj, fl)
	}
	return obj.GetLabels()[UIDLabel] == string(fl.UID)
}

// errConflict is an object of the controller's name that someone else made: it is reported and
// left alone, never adopted.
type errConflict struct{ kind, key string }

func (e errConflict) Error() string {
	return fmt.Sprintf("%s %s exists and was not made for this FederatedLearning: Flotilla leaves it alone; delete or rename it", e.kind, e.key)
}

// ensure creates desired, or updates the controller's own object of its name when what the
// controller wants changed (immutable ones, such as Jobs and claims, are never updated). It
// returns the live object (into existing) or an errConflict.
func (r *Reconciler) ensure(ctx context.Context, fl *flv1alpha1.FederatedLearning, kind string, desired, existing client.Object, mutable bool) error {
	h := hashOf(desired)
	ann := desired.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[HashAnnotation] = h
	desired.SetAnnotations(ann)
	key := client.ObjectKeyFromObject(desired)
	// The hub caches only some ConfigMaps (internal/hub/manager.go): read these from the API server.
	var get client.Reader = r.Client
	if _, ok := desired.(*corev1.ConfigMap); ok {
		get = r.Reader
	}
	err := get.Get(ctx, key, existing)
	if apierrors.IsNotFound(err) {
		if err := r.Client.Create(ctx, desired); apierrors.IsAlreadyExists(err) {
			// The cache holds only objects with the controller's labels: this one has none.
			return errConflict{kind, key.String()}
		} else if err != nil {
			return fmt.Errorf("creating %s %s: %w", kind, key, err)
		}
		// The cache may not hold it yet: the API server's answer is the live object.
		return copyInto(existing, desired)
	}
	if err != nil {
		return err
	}
	if !mine(fl, existing) {
		return errConflict{kind, key.String()}
	}
	if !mutable || existing.GetAnnotations()[HashAnnotation] == h {
		return nil
	}
	desired.SetResourceVersion(existing.GetResourceVersion())
	if err := r.Client.Update(ctx, desired); err != nil {
		return fmt.Errorf("updating %s %s: %w", kind, key, err)
	}
	return copyInto(existing, desired)
}

// copyInto sets *dst to *src; both are pointers to the same type.
func copyInto(dst, src client.Object) error {
	d, sv := reflect.ValueOf(dst), reflect.ValueOf(src)
	if d.Type() != sv.Type() {
		return fmt.Errorf("internal error: %T is not %T", src, dst)
	}
	d.Elem().Set(sv.Elem())
	return nil
}
