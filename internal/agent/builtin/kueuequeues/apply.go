package kueuequeues

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
)

// spoke writes Kueue's objects on the cluster.
type spoke struct {
	cluster string
	c       client.Client
}

func newSpoke(cluster string, cfg *rest.Config) (*spoke, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := kueuev1beta2.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cluster, err)
	}
	return &spoke{cluster: cluster, c: c}, nil
}

// notServed is the error of a cluster that does not serve Kueue's API.
func notServed(cluster string) error {
	return fmt.Errorf("cluster %s does not serve Kueue's API (%s): install Kueue on %s "+
		"(flotilla dev up --with kueue for local fleets); the add-on tries again on its own",
		cluster, kueuev1beta2.GroupVersion, cluster)
}

// served reports whether the cluster serves ResourceFlavors, ClusterQueues and LocalQueues of
// kueue.x-k8s.io/v1beta2.
func served(cluster string, cfg *rest.Config) (bool, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false, err
	}
	l, err := dc.ServerResourcesForGroupVersion(kueuev1beta2.GroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cluster %s: looking for Kueue's API (%s): %w", cluster, kueuev1beta2.GroupVersion, err)
	}
	want := map[string]bool{"resourceflavors": true, "clusterqueues": true, "localqueues": true}
	for _, r := range l.APIResources {
		delete(want, r.Name)
	}
	return len(want) == 0, nil
}

// fail is the error of doing (reading, creating, ...) kind name, notServed when the API has no
// such kind (Kueue's CRDs removed while the add-on runs).
func (s *spoke) fail(doing, kind, name string, err error) error {
	if meta.IsNoMatchError(err) || discovery.IsGroupDiscoveryFailedError(err) {
		return notServed(s.cluster)
	}
	return fmt.Errorf("cluster %s: %s %s %s: %w", s.cluster, doing, kind, name, err)
}

// conflictError is the error of an object of one of the add-on's names that is not the add-on's.
type conflictError struct{ cluster, kind, name string }

func (e *conflictError) Error() string {
	return fmt.Sprintf("%s %s on cluster %s exists and was not written by the built-in add-on %s (no label %s=%s): "+
		"the add-on neither changes nor deletes it; delete or rename it for the add-on to write its own, "+
		"or switch the add-on off on %s", e.kind, e.name, e.cluster, Name, builtinaddon.Label, Name, e.cluster)
}

func owned(obj client.Object) bool { return obj.GetLabels()[builtinaddon.Label] == Name }

// ensure makes the object named as want carry want's content: it creates it (labeled) when
// there is none, updates it when it is the add-on's and differs (content copies want's fields
// into the object read), and leaves it alone with a conflict error when it is someone else's.
// A write that loses a race (Kueue writes the ClusterQueue's status and finalizers too) reads
// the object again and retries, rather than failing the whole pass. It reports whether it wrote.
func (s *spoke) ensure(ctx context.Context, kind string, want, cur client.Object, content func(cur client.Object)) (bool, error) {
	wrote := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var err error
		wrote, err = s.ensureOnce(ctx, kind, want, cur, content)
		return err
	})
	return wrote, err
}

// ensureOnce is one try of ensure; its error wraps the API's, so that a conflict shows.
func (s *spoke) ensureOnce(ctx context.Context, kind string, want, cur client.Object, content func(cur client.Object)) (bool, error) {
	key := client.ObjectKeyFromObject(want)
	err := s.c.Get(ctx, key, cur)
	if apierrors.IsNotFound(err) {
		obj := want.DeepCopyObject().(client.Object)
		obj.SetLabels(map[string]string{builtinaddon.Label: Name})
		if err := s.c.Create(ctx, obj); err != nil {
			return false, s.fail("creating", kind, keyString(key), err)
		}
		return true, nil
	}
	if err != nil {
		return false, s.fail("reading", kind, keyString(key), err)
	}
	if !owned(cur) {
		return false, &conflictError{cluster: s.cluster, kind: kind, name: keyString(key)}
	}
	next := cur.DeepCopyObject().(client.Object)
	content(next)
	if equality.Semantic.DeepEqual(cur, next) {
		return false, nil
	}
	if err := s.c.Update(ctx, next); err != nil {
		return false, s.fail("updating", kind, keyString(key), err)
	}
	return true, nil
}

// apply makes the cluster hold d: the flavors first, then the ClusterQueue that names them, the
// LocalQueue, and last it deletes the add-on's flavors that d no longer has. It goes on past an
// object that is someone else's and returns every such conflict together. It returns how many
// objects it wrote.
func (s *spoke) apply(ctx context.Context, d Desired) (int, error) {
	var conflicts []error
	writes := 0
	step := func(wrote bool, err error) error {
		if wrote {
			writes++
		}
		var c *conflictError
		if errors.As(err, &c) {
			conflicts = append(conflicts, err)
			return nil
		}
		return err
	}
	for i := range d.Flavors {
		want := &d.Flavors[i]
		if err := step(s.ensure(ctx, "ResourceFlavor", want, &kueuev1beta2.ResourceFlavor{}, func(o client.Object) {
			o.(*kueuev1beta2.ResourceFlavor).Spec.NodeLabels = want.Spec.NodeLabels
		})); err != nil {
			return writes, err
		}
	}
	cq := &d.ClusterQueue
	if err := step(s.ensure(ctx, "ClusterQueue", cq, &kueuev1beta2.ClusterQueue{}, func(o client.Object) {
		cur := o.(*kueuev1beta2.ClusterQueue)
		cur.Spec.NamespaceSelector = cq.Spec.NamespaceSelector
		cur.Spec.ResourceGroups = cq.Spec.ResourceGroups
	})); err != nil {
		return writes, err
	}
	// A LocalQueue's clusterQueue is immutable: the add-on's always names ClusterQueueName.
	if err := step(s.ensure(ctx, "LocalQueue", &d.LocalQueue, &kueuev1beta2.LocalQueue{}, func(client.Object) {})); err != nil {
		return writes, err
	}
	keep := map[string]bool{}
	for _, f := range d.Flavors {
		keep[f.Name] = true
	}
	n, err := s.deleteFlavors(ctx, keep)
	writes += n
	if err != nil {
		return writes, err
	}
	return writes, errors.Join(conflicts...)
}

// deleteFlavors deletes the add-on's ResourceFlavors whose names keep lacks.
func (s *spoke) deleteFlavors(ctx context.Context, keep map[string]bool) (int, error) {
	l := &kueuev1beta2.ResourceFlavorList{}
	if err := s.c.List(ctx, l, client.MatchingLabels{builtinaddon.Label: Name}); err != nil {
		return 0, s.fail("listing", "the add-on's", "ResourceFlavors", err)
	}
	n := 0
	for i := range l.Items {
		if f := &l.Items[i]; !keep[f.Name] {
			if err := s.deleteOwned(ctx, "ResourceFlavor", f); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// deleteOwned deletes obj, read before, if the add-on wrote it.
func (s *spoke) deleteOwned(ctx context.Context, kind string, obj client.Object) error {
	if !owned(obj) {
		return nil
	}
	uid := obj.GetUID()
	if err := s.c.Delete(ctx, obj, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return s.fail("deleting", kind, keyString(client.ObjectKeyFromObject(obj)), err)
	}
	return nil
}

// cleanup deletes what the add-on wrote: the LocalQueue, the ClusterQueue, the flavors. Kueue's
// finalizers keep each until nothing uses it.
func (s *spoke) cleanup(ctx context.Context) error {
	for _, o := range []struct {
		kind string
		obj  client.Object
	}{
		{"LocalQueue", &kueuev1beta2.LocalQueue{}},
		{"ClusterQueue", &kueuev1beta2.ClusterQueue{}},
	} {
		key := client.ObjectKey{Name: ClusterQueueName}
		if o.kind == "LocalQueue" {
			key = client.ObjectKey{Namespace: LocalQueueNS, Name: LocalQueueName}
		}
		err := s.c.Get(ctx, key, o.obj)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return s.fail("reading", o.kind, keyString(key), err)
		}
		if err := s.deleteOwned(ctx, o.kind, o.obj); err != nil {
			return err
		}
	}
	_, err := s.deleteFlavors(ctx, nil)
	return err
}

// keyString is namespace/name, or name for a cluster-scoped object.
func keyString(k client.ObjectKey) string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.String()
}
