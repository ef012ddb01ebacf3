package delivery

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
)

// Reasons a cluster receives nothing new from the hub, for conditions that carry them.
const (
	// ReasonNotFound: no ManagedCluster of the namespace's name.
	ReasonNotFound = "ClusterNotFound"
	// ReasonNotAccepted: the ManagedCluster's spec.hubAcceptsClient is false.
	ReasonNotAccepted = "ClusterNotAccepted"
	// ReasonDeleting: the ManagedCluster is being deleted.
	ReasonDeleting = "ClusterDeleting"
	// ReasonNamespaceTerminating: the cluster's namespace is being deleted.
	ReasonNamespaceTerminating = "ClusterNamespaceTerminating"
)

// Refusal says why the hub creates no ManifestWork or ManagedClusterAddOn in a cluster's
// namespace.
type Refusal struct {
	Cluster string
	// Reason is one of the Reason constants.
	Reason string
	// Message names the object, the field and what would change it.
	Message string
}

func (r *Refusal) Error() string { return r.Message }

// Judge is the rule: mc is the cluster (nil when it does not exist), ns its namespace (nil when
// it does not exist yet: the registration controller makes it, and a create there fails until
// then). It returns nil when the hub may create add-ons and works for cluster.
func Judge(cluster string, mc *clusterv1.ManagedCluster, ns *corev1.Namespace) *Refusal {
	no := func(reason, format string, args ...any) *Refusal {
		return &Refusal{Cluster: cluster, Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case mc == nil:
		return no(ReasonNotFound, "ManagedCluster %s does not exist: the hub puts nothing in namespace %s until the cluster registers", cluster, cluster)
	case !mc.DeletionTimestamp.IsZero():
		return no(ReasonDeleting, "ManagedCluster %s is being deleted: the hub puts nothing new in its namespace while it removes what is there", cluster)
	case !mc.Spec.HubAcceptsClient:
		return no(ReasonNotAccepted, "ManagedCluster %s is not accepted by the hub (spec.hubAcceptsClient is false): "+
			"the hub puts nothing in its namespace until an administrator accepts it", cluster)
	case ns != nil && (!ns.DeletionTimestamp.IsZero() || ns.Status.Phase == corev1.NamespaceTerminating):
		return no(ReasonNamespaceTerminating, "namespace %s of ManagedCluster %s is terminating: the hub puts nothing new in it", cluster, cluster)
	}
	return nil
}

// Check reads cluster's ManagedCluster and namespace through r and judges them (Judge). The
// error is only a failure to read.
func Check(ctx context.Context, r client.Reader, cluster string) (*Refusal, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := r.Get(ctx, client.ObjectKey{Name: cluster}, mc); apierrors.IsNotFound(err) {
		mc = nil
	} else if err != nil {
		return nil, fmt.Errorf("reading ManagedCluster %s: %w", cluster, err)
	}
	if mc == nil || !mc.DeletionTimestamp.IsZero() || !mc.Spec.HubAcceptsClient {
		return Judge(cluster, mc, nil), nil // the namespace needs no read
	}
	ns := &corev1.Namespace{}
	if err := r.Get(ctx, client.ObjectKey{Name: cluster}, ns); apierrors.IsNotFound(err) {
		ns = nil
	} else if err != nil {
		return nil, fmt.Errorf("reading namespace %s: %w", cluster, err)
	}
	return Judge(cluster, mc, ns), nil
}
