package install

import (
	"context"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

// A failed install is rolled back, as `helm install/upgrade --rollback-on-failure` does: before
// changing anything, InstallChart reads every object the install may change (what it renders,
// what the previous install's inventory lists, and the inventory itself); when the install
// fails, each object that existed is applied again as it was and each that did not is removed
// (only when it carries the release's labels, as Remove does). CRDs stay, as Helm keeps them: a
// newer CRD serves the older version too, and deleting one deletes every object of its kind.

// snapshot is what the cluster held, before an install, of the objects the install may change.
type snapshot struct {
	refs []objectRef
	// before holds the live object of each ref that existed; a ref missing from it did not.
	before map[objectRef]*unstructured.Unstructured
}

// takeSnapshot reads refs from the cluster cfg points at. A kind the cluster does not serve yet
// (its CRD comes with this install) has no objects to keep.
func takeSnapshot(ctx context.Context, cfg *rest.Config, refs []objectRef) (*snapshot, error) {
	dyn, mapper, err := clients(cfg)
	if err != nil {
		return nil, err
	}
	s := &snapshot{before: map[objectRef]*unstructured.Unstructured{}}
	seen := map[objectRef]bool{}
	for _, r := range refs {
		if seen[r] {
			continue
		}
		seen[r] = true
		s.refs = append(s.refs, r)
		o := r.object("")
		ri, err := resource(dyn, mapper, o)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		live, err := ri.Get(ctx, r.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s %s before installing, to roll back to: %w", r.Kind, objectName(o), err)
		}
		s.before[r] = live
	}
	return s, nil
}

// restorable is live as an object to apply again: what its writer set (metadata's name,
// namespace, labels, annotations and owner references, and the body), without what the API
// server and controllers keep (status, resource version, UID, managed fields, the Deployment
// controller's revision).
func restorable(live *unstructured.Unstructured) *unstructured.Unstructured {
	o := live.DeepCopy()
	delete(o.Object, "status")
	md := map[string]any{"name": live.GetName()}
	if ns := live.GetNamespace(); ns != "" {
		md["namespace"] = ns
	}
	if l := live.GetLabels(); len(l) > 0 {
		md["labels"] = toAny(l)
	}
	a := live.GetAnnotations()
	delete(a, "deployment.kubernetes.io/revision")
	if len(a) > 0 {
		md["annotations"] = toAny(a)
	}
	if refs, ok := live.Object["metadata"].(map[string]any)["ownerReferences"]; ok {
		md["ownerReferences"] = refs
	}
	o.Object["metadata"] = md
	return o
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// plan splits the snapshot into what to apply again and what to remove, in the install's order.
func (s *snapshot) plan(release string) (reapply, remove []*unstructured.Unstructured) {
	for _, r := range s.refs {
		if live, ok := s.before[r]; ok {
			reapply = append(reapply, restorable(live))
		} else {
			remove = append(remove, r.object(release))
		}
	}
	return reapply, remove
}

// restore puts back what s read and removes what the install added, and then the namespaces the
// install created (made; only a first install makes one). It says what it did on out.
func (s *snapshot) restore(ctx context.Context, cfg *rest.Config, release string, made []string, out io.Writer) error {
	reapply, remove := s.plan(release)
	if err := Objects(ctx, cfg, reapply, false, nil); err != nil {
		return err
	}
	if _, err := Remove(ctx, cfg, remove, nil); err != nil {
		return err
	}
	dyn, mapper, err := clients(cfg)
	if err != nil {
		return err
	}
	for _, name := range made {
		o := objectRef{"v1", "Namespace", "", name}.object(release)
		ri, err := resource(dyn, mapper, o)
		if err != nil {
			return err
		}
		if err := ri.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting namespace %s, which the failed install created: %w", name, err)
		}
	}
	if out != nil {
		_, _ = fmt.Fprintf(out, "rolled back: %d objects as they were, %d objects and %d namespaces the install added removed\n",
			len(reapply), len(remove), len(made))
	}
	return nil
}

// rollbackTimeout bounds a rollback that runs after the caller's context ended (interrupted).
const rollbackTimeout = 2 * time.Minute
