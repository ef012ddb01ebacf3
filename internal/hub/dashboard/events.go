package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	federationaiv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	queuev1alpha1 "github.com/flotilla/flotilla/api/queue/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla/flotilla/api/work/v1alpha1"
)

// Pacing of live updates: at most one "change" per minInterval (a fleet of 5,000 clusters
// changes all the time, and each change makes the page refetch one page), and a comment every
// keepAlive so that proxies keep the stream open.
const (
	minInterval = time.Second
	keepAlive   = 15 * time.Second
)

// watched are the lists each view's page shows, namespaced ones in the view's namespace. Kinds
// the hub does not serve (Kueue's, federated learning's) are skipped.
func (s *Server) watched(view string) []client.ObjectList {
	switch view {
	case "fleet":
		return []client.ObjectList{&clusterv1.ManagedClusterList{}, &clusterv1beta2.ManagedClusterSetList{}}
	case "gpus":
		return []client.ObjectList{&clusterv1.ManagedClusterList{}, &usagev1alpha1.ResourceUsageList{}}
	case "placements":
		return []client.ObjectList{&clusterv1beta1.PlacementList{}, &clusterv1beta1.PlacementDecisionList{}, &clusterv1.ManagedClusterList{}}
	case "works":
		return []client.ObjectList{&workv1.ManifestWorkList{}, &workv1alpha1.ManifestWorkReplicaSetList{}}
	case "addons":
		return []client.ObjectList{&addonv1alpha1.ManagedClusterAddOnList{}}
	case "policies":
		return []client.ObjectList{&policyv1.PolicyList{}}
	case "timeline":
		// A cluster's page: its loss is written on the ManagedCluster, its moved workloads on
		// the hub's Kueue Workloads.
		return append([]client.ObjectList{&clusterv1.ManagedClusterList{}}, s.workloadLists()...)
	case "queues":
		// A FleetQueue's page: its teams' ClusterQueues hold the GPUs, its Workloads wait.
		out := []client.ObjectList{&queuev1alpha1.FleetQueueList{}}
		if _, err := s.o.Mapper.RESTMapping(kueueClusterQueue.GroupKind(), kueueClusterQueue.Version); err == nil {
			out = append(out, &kueuev1beta2.ClusterQueueList{})
		}
		return append(out, s.workloadLists()...)
	case "jobs":
		out := s.workloadLists()
		if _, err := s.o.Mapper.RESTMapping(schema.GroupKind{Group: federationaiv1alpha1.GroupVersion.Group, Kind: "FederatedLearning"}); err == nil {
			out = append(out, &federationaiv1alpha1.FederatedLearningList{})
		}
		return out
	}
	return nil
}

// workloadLists is a list of the hub's Kueue Workloads in the version it serves, or none.
func (s *Server) workloadLists() []client.ObjectList {
	m, err := s.o.Mapper.RESTMapping(kueueWorkload)
	if err != nil {
		return nil
	}
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(m.GroupVersionKind.GroupVersion().WithKind("WorkloadList"))
	return []client.ObjectList{l}
}

// events streams Server-Sent Events: "change" whenever an object the view shows changes, as
// watches made with the viewer's identity see it. The page refetches its current page on each.
// A watch the viewer may not make ends the request with the refusal before the stream starts.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	q, e := parseQuery(r.URL.Query(), "view", "namespace")
	if e != nil {
		writeError(w, e)
		return
	}
	if q.View == "" {
		writeError(w, badParam("view", "is required: give one of %s", strings.Join(viewNames(), ", ")))
		return
	}
	c, e := s.client(r)
	if e != nil {
		writeError(w, e)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, &apiError{Code: http.StatusInternalServerError, Message: "the server cannot stream events"})
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	changes := make(chan struct{}, 1)
	var opts []client.ListOption
	if q.Namespace != "" {
		opts = append(opts, client.InNamespace(q.Namespace))
	}
	// The view's first kind is what it lists; a viewer who may not watch it gets the refusal. The
	// others (sets, decisions, replica sets) only add to the page, as its notes say, and are
	// watched when the viewer may.
	for i, list := range s.watched(q.View) {
		rv, err := resourceVersion(ctx, c, list, opts)
		if err != nil {
			if i == 0 || apierrors.IsUnauthorized(err) {
				writeError(w, hubError(err, "watching "+listName(list)))
				return
			}
			continue
		}
		go s.watch(ctx, c, list, opts, rv, changes)
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprintf(w, "retry: 2000\nevent: ready\ndata: {\"view\":%q}\n\n", q.View)
	flusher.Flush()
	pace := s.o.Clock.NewTicker(minInterval)
	defer pace.Stop()
	alive := s.o.Clock.NewTicker(keepAlive)
	defer alive.Stop()
	dirty := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-changes:
			dirty = true
		case <-pace.C():
			if dirty {
				dirty = false
				if _, err := fmt.Fprintf(w, "event: change\ndata: {\"view\":%q}\n\n", q.View); err != nil {
					return
				}
				flusher.Flush()
			}
		case <-alive.C():
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}

// resourceVersion is the list's current resource version, read with a list of one object: a
// watch from it sends only what changes next, not every object that exists.
func resourceVersion(ctx context.Context, c client.Client, list client.ObjectList, opts []client.ListOption) (string, error) {
	l := list.DeepCopyObject().(client.ObjectList)
	if err := c.List(ctx, l, append([]client.ListOption{client.Limit(1)}, opts...)...); err != nil {
		return "", err
	}
	return l.GetResourceVersion(), nil
}

// watch watches list from rv and signals changes until ctx ends. When the watch ends (the API
// server closes watches after a while, or rv is too old) it starts again from now and signals a
// change, since one may have been missed.
func (s *Server) watch(ctx context.Context, c client.WithWatch, list client.ObjectList, opts []client.ListOption, rv string, changes chan<- struct{}) {
	signal := func() {
		select {
		case changes <- struct{}{}:
		default:
		}
	}
	for ctx.Err() == nil {
		l := list.DeepCopyObject().(client.ObjectList)
		wopts := append([]client.ListOption{&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}}}, opts...)
		wi, err := c.Watch(ctx, l, wopts...)
		if err == nil {
			for ev := range wi.ResultChan() {
				if ev.Type == watch.Bookmark {
					if o, err := meta.Accessor(ev.Object); err == nil {
						rv = o.GetResourceVersion()
					}
					continue
				}
				if ev.Type == watch.Error {
					break
				}
				if o, err := meta.Accessor(ev.Object); err == nil {
					rv = o.GetResourceVersion()
				}
				signal()
			}
			wi.Stop()
		}
		if ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-s.o.Clock.After(time.Second):
		}
		if fresh, err := resourceVersion(ctx, c, list, opts); err == nil {
			rv = fresh
			signal()
		}
	}
}

// listName is the resource a list holds, as kubectl names it: managedclusters.
func listName(list client.ObjectList) string {
	kind := ""
	if gvk, err := apiutil.GVKForObject(list, scheme.Scheme); err == nil {
		kind = gvk.Kind
	}
	if u, ok := list.(*unstructured.UnstructuredList); ok {
		kind = u.GetKind()
	}
	return strings.ToLower(strings.TrimSuffix(kind, "List")) + "s"
}
