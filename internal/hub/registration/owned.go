package registration

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
)

// The hub writes and deletes only objects it made for a cluster and marked as its own: an object
// is the hub's when its controller reference names that ManagedCluster, UID included. Names alone
// prove nothing: whoever may create a ManagedCluster (the bootstrap identity, which every joining
// agent holds) chooses its name, and so the names of the namespace, roles and bindings the hub
// derives from it. Without this rule a cluster named after a team's namespace would make the hub
// take that namespace over on acceptance and delete it on denial.

// notOwnedError says that an object the hub would write for a cluster already exists and is not
// the hub's.
type notOwnedError struct {
	Kind, Name, Namespace, Cluster string
}

func (e *notOwnedError) Error() string {
	where := e.Kind + " " + e.Name
	if e.Namespace != "" {
		where = fmt.Sprintf("%s %s/%s", e.Kind, e.Namespace, e.Name)
	}
	return fmt.Sprintf("%s exists and was not created by the hub for ManagedCluster %s; the hub neither takes it over "+
		"nor deletes it: register the cluster under another name, or delete or rename the %s if it is unused",
		where, e.Cluster, e.Kind)
}

// ownedBy reports whether obj's controller reference is mc.
func ownedBy(obj metav1.Object, mc *clusterv1.ManagedCluster) bool {
	ref := metav1.GetControllerOf(obj)
	return ref != nil && ref.UID == mc.UID && ref.Kind == "ManagedCluster" && ref.Name == mc.Name
}

// ensureOwned makes obj (its name and namespace set, the rest as the caller wants it after mutate)
// exist as mc's: it creates it with mc as controller when missing, updates it when it is mc's and
// mutate changed it, and returns a *notOwnedError, writing nothing, when it exists and is not mc's.
// mutate sets the fields the hub owns; it may be nil. Afterwards obj is what the server holds.
func ensureOwned(ctx context.Context, c client.Client, mc *clusterv1.ManagedCluster, obj client.Object, mutate func()) error {
	if mutate == nil {
		mutate = func() {}
	}
	kind := kindOf(c, obj)
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	if apierrors.IsNotFound(err) {
		mutate()
		if err := controllerutil.SetControllerReference(mc, obj, c.Scheme()); err != nil {
			return err
		}
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating %s %s: %w", kind, obj.GetName(), err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s %s: %w", kind, obj.GetName(), err)
	}
	if !ownedBy(obj, mc) {
		return &notOwnedError{Kind: kind, Name: obj.GetName(), Namespace: obj.GetNamespace(), Cluster: mc.Name}
	}
	before := obj.DeepCopyObject()
	mutate()
	if equality.Semantic.DeepEqual(before, obj) {
		return nil
	}
	if err := c.Update(ctx, obj); err != nil {
		return fmt.Errorf("updating %s %s: %w", kind, obj.GetName(), err)
	}
	return nil
}

// firstNotOwned returns the first of objs (names and namespaces set) that exists and is not mc's,
// as a *notOwnedError, or nil when each is missing or mc's.
func firstNotOwned(ctx context.Context, c client.Client, mc *clusterv1.ManagedCluster, objs ...client.Object) (*notOwnedError, error) {
	for _, obj := range objs {
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", kindOf(c, obj), obj.GetName(), err)
		}
		if !ownedBy(obj, mc) {
			return &notOwnedError{Kind: kindOf(c, obj), Name: obj.GetName(), Namespace: obj.GetNamespace(), Cluster: mc.Name}, nil
		}
	}
	return nil, nil
}

// deleteOwned deletes obj (its name and namespace set) if it exists and is mc's, and leaves it
// alone otherwise. The UID precondition keeps a delete from reaching an object of the same name
// made between the read and the delete.
func deleteOwned(ctx context.Context, c client.Client, mc *clusterv1.ManagedCluster, obj client.Object) error {
	kind := kindOf(c, obj)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading %s %s: %w", kind, obj.GetName(), err)
	}
	if !ownedBy(obj, mc) || !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	uid := obj.GetUID()
	err := c.Delete(ctx, obj, client.Preconditions{UID: &uid})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting %s %s: %w", kind, obj.GetName(), err)
	}
	return nil
}

// kindOf names obj's kind for messages.
func kindOf(c client.Client, obj client.Object) string {
	if gvk, err := c.GroupVersionKindFor(obj); err == nil {
		return gvk.Kind
	}
	return fmt.Sprintf("%T", obj)
}
