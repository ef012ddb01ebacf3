package delivery

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
)

// Changed passes the events of ManagedClusters and Namespaces that may change Check's answer
// for a cluster: their creation and deletion, and updates of spec.hubAcceptsClient, the
// deletion timestamp or a namespace's phase. A controller that skipped a cluster watches both
// kinds through it, so that a cluster accepted again, or a namespace made anew, gets what was
// held back without waiting for a resync. Other updates (a ManagedCluster's status every lease
// period) pass nothing.
var Changed predicate.Predicate = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero() ||
			accepted(e.ObjectOld) != accepted(e.ObjectNew) || phase(e.ObjectOld) != phase(e.ObjectNew)
	},
	GenericFunc: func(event.GenericEvent) bool { return false },
}

func accepted(o client.Object) bool {
	mc, ok := o.(*clusterv1.ManagedCluster)
	return ok && mc.Spec.HubAcceptsClient
}

func phase(o client.Object) corev1.NamespacePhase {
	if ns, ok := o.(*corev1.Namespace); ok {
		return ns.Status.Phase
	}
	return ""
}
