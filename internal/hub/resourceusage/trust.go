package resourceusage

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
)

// A ResourceUsage is written by a cluster's agent (or by anyone who may write in some
// namespace), and every cluster's scores are normalised by the fleet's maxima: one report of a
// million GPUs would push every other cluster's GPU scores to -100. So only the figures of
// accepted clusters count, and only plausible ones.

// DefaultMaxAcceleratorsPerNode is the default cap of GPUs (nvidia.com/gpu) and TPUs
// (google.com/tpu) on one node: the largest machines carry 16.
const DefaultMaxAcceleratorsPerNode = 64

// MaxAcceleratorsFlag is the hub's flag that sets Reconciler.MaxAcceleratorsPerNode.
const MaxAcceleratorsFlag = "--resource-usage-max-accelerators-per-node"

// Fixed per-node caps of cpu and memory, far above any machine sold.
var (
	maxCPUPerNode    = resource.MustParse("4096")
	maxMemoryPerNode = resource.MustParse("64Ti")
)

// ReasonImplausible is the event reason of a ResourceUsage left out of the fleet's maxima.
const ReasonImplausible = "ImplausibleResourceUsage"

// nodeCap is the most one node may have of resource name, nil when unbounded.
func (r *Reconciler) nodeCap(name string) *resource.Quantity {
	switch name {
	case "cpu":
		return &maxCPUPerNode
	case "memory":
		return &maxMemoryPerNode
	case usagev1alpha1.ResourceNvidiaGPU, usagev1alpha1.ResourceGoogleTPU:
		n := r.MaxAcceleratorsPerNode
		if n <= 0 {
			n = DefaultMaxAcceleratorsPerNode
		}
		return resource.NewQuantity(n, resource.DecimalSI)
	}
	return nil
}

// Implausible says why a cluster's figures cannot be true, naming the field and the fix; nil when
// they can: allocatable above capacity, free above allocatable, one node above the fleet's cap
// per node, the cluster above its node count times that cap, or per-node figures that do not fit
// the cluster's (implausibleNodes).
func (r *Reconciler) Implausible(u *usagev1alpha1.ResourceUsage) error {
	for i := range u.Status.Resources {
		f := &u.Status.Resources[i]
		field := fmt.Sprintf("status.resources[%d] (%s", i, f.Name)
		if f.Model != "" {
			field += ", model " + f.Model
		}
		field += ")"
		bad := func(format string, args ...any) error {
			return fmt.Errorf("ResourceUsage %s/%s: %s: %s; the hub leaves the cluster out of the fleet's maxima and writes it no resource-usage-score: "+
				"fix the cluster's node figures (or its agent)", u.Namespace, u.Name, field, fmt.Sprintf(format, args...))
		}
		switch {
		case f.Allocatable.Cmp(f.Capacity) > 0:
			return bad("allocatable %s is above capacity %s", f.Allocatable.String(), f.Capacity.String())
		case f.Free.Cmp(f.Allocatable) > 0:
			return bad("free %s is above allocatable %s", f.Free.String(), f.Allocatable.String())
		case f.LargestNodeAllocatable.Cmp(f.Allocatable) > 0:
			return bad("largestNodeAllocatable %s is above allocatable %s", f.LargestNodeAllocatable.String(), f.Allocatable.String())
		}
		if err := implausibleNodes(f, u.Status.Nodes); err != "" {
			return bad("%s", err)
		}
		c := r.nodeCap(f.Name)
		if c == nil {
			continue
		}
		hint := ""
		if f.Name == usagev1alpha1.ResourceNvidiaGPU || f.Name == usagev1alpha1.ResourceGoogleTPU {
			hint = fmt.Sprintf(" (hub flag %s)", MaxAcceleratorsFlag)
		}
		for j := range f.Nodes {
			if f.Nodes[j].Allocatable.Cmp(*c) > 0 {
				return bad("nodes[%d] (%s): allocatable %s is above the cap of %s per node%s", j, f.Nodes[j].Name, f.Nodes[j].Allocatable.String(), c.String(), hint)
			}
		}
		if f.LargestNodeAllocatable.Cmp(*c) > 0 {
			return bad("largestNodeAllocatable %s is above the cap of %s per node%s", f.LargestNodeAllocatable.String(), c.String(), hint)
		}
		if len(f.FreeNodes) > 0 && f.FreeNodes[0].Free.Cmp(*c) > 0 {
			return bad("freeNodes[0].free %s is above the cap of %s per node%s", f.FreeNodes[0].Free.String(), c.String(), hint)
		}
		if n := int64(u.Status.Nodes); n > 0 {
			total := c.DeepCopy()
			total.Mul(n)
			if f.Allocatable.Cmp(total) > 0 {
				return bad("allocatable %s is above %d nodes (status.nodes) times the cap of %s per node%s", f.Allocatable.String(), n, c.String(), hint)
			}
		}
	}
	return nil
}

// implausibleNodes says why a model's per-node figures cannot be true: more nodes than the
// cluster counts, names out of order or repeated, or nodes that add up to more than the model's
// allocatable (the agent keeps at most the API's limit of nodes, so fewer may add up to less).
func implausibleNodes(f *usagev1alpha1.ResourceFigures, counted int32) string {
	if len(f.Nodes) == 0 {
		return ""
	}
	if len(f.Nodes) > int(counted) {
		return fmt.Sprintf("%d nodes are listed but status.nodes counts %d", len(f.Nodes), counted)
	}
	var sum resource.Quantity
	for j := range f.Nodes {
		if j > 0 && f.Nodes[j].Name <= f.Nodes[j-1].Name {
			return fmt.Sprintf("nodes[%d] (%s) is not after nodes[%d] (%s): nodes are sorted by name, each once", j, f.Nodes[j].Name, j-1, f.Nodes[j-1].Name)
		}
		sum.Add(f.Nodes[j].Allocatable)
	}
	if sum.Cmp(f.Allocatable) > 0 {
		return fmt.Sprintf("the nodes' allocatable adds up to %s, above allocatable %s", sum.String(), f.Allocatable.String())
	}
	return ""
}

// Recorder emits events (events.k8s.io); the manager's GetEventRecorder gives one.
type Recorder interface {
	Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...interface{})
}

// admitted is u when its figures count, nil when they do not: its namespace is no accepted
// cluster's, or they are implausible (flagged by an event on the ResourceUsage, once per problem).
func (r *Reconciler) admitted(ctx context.Context, u *usagev1alpha1.ResourceUsage) (*usagev1alpha1.ResourceUsage, error) {
	ok, err := acceptedCluster(ctx, r.Client, u.Namespace)
	if err != nil || !ok {
		return nil, err
	}
	problem := r.Implausible(u)
	r.flagMu.Lock()
	defer r.flagMu.Unlock()
	if problem == nil {
		delete(r.flagged, u.Namespace)
		return u, nil
	}
	if r.flagged == nil {
		r.flagged = map[string]string{}
	}
	if msg := problem.Error(); r.flagged[u.Namespace] != msg {
		r.flagged[u.Namespace] = msg
		log.FromContext(ctx).Info("an implausible ResourceUsage is left out of the fleet's maxima", "cluster", u.Namespace, "problem", msg)
		if r.Recorder != nil {
			r.Recorder.Eventf(u, nil, corev1.EventTypeWarning, ReasonImplausible, "Score", "cluster %s: %s", u.Namespace, msg)
		}
	}
	return nil, nil
}

// acceptedCluster reports whether ns is an accepted cluster's namespace: a ManagedCluster of
// that name with spec.hubAcceptsClient, whose Namespace the hub made for it (its controller is
// that ManagedCluster, UID included). A namespace anyone else made, or a denied cluster's,
// never counts.
func acceptedCluster(ctx context.Context, c client.Reader, ns string) (bool, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: ns}, mc); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if !mc.Spec.HubAcceptsClient || mc.DeletionTimestamp != nil {
		return false, nil
	}
	n := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: ns}, n); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	ref := metav1.GetControllerOf(n)
	return ref != nil && ref.Kind == "ManagedCluster" && ref.Name == mc.Name && ref.UID == mc.UID, nil
}
