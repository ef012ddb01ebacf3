package managedserviceaccount

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	authv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"
)

// ReasonNotAClusterNamespace is the reason of condition SecretCreated False that the hub writes
// on a ManagedServiceAccount outside a cluster's namespace (one made while the hub's webhook was
// not answering, or whose cluster went).
const ReasonNotAClusterNamespace = "NotAClusterNamespace"

// plan is what the hub does in one namespace.
type plan struct {
	// expired are the ManagedServiceAccounts whose ttlSecondsAfterCreation has passed.
	expired []string
	// orphans are those outside a cluster's namespace, which get ReasonNotAClusterNamespace.
	orphans []string
	// bind says whether the cluster's agents get ClusterRole rbac.ManagedServiceAccountAgentName
	// in the namespace: while it is a cluster's and holds a ManagedServiceAccount.
	bind bool
	// requeue is when the next ttl ends (zero: none).
	requeue time.Duration
}

// decide plans a namespace's ManagedServiceAccounts; cluster says whether the namespace is a
// ManagedCluster's.
func decide(msas []authv1beta1.ManagedServiceAccount, cluster bool, now time.Time) plan {
	var p plan
	for i := range msas {
		m := &msas[i]
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		if ttl := m.Spec.TTLSecondsAfterCreation; ttl != nil {
			end := m.CreationTimestamp.Add(time.Duration(*ttl) * time.Second)
			if !now.Before(end) {
				p.expired = append(p.expired, m.Name)
				continue
			}
			if wait := end.Sub(now); p.requeue == 0 || wait < p.requeue {
				p.requeue = wait
			}
		}
		if !cluster {
			p.orphans = append(p.orphans, m.Name)
			continue
		}
		p.bind = true
	}
	return p
}

// notAClusterNamespace is the condition of a ManagedServiceAccount in namespace ns, which is no
// cluster's.
func notAClusterNamespace(ns string) metav1.Condition {
	return metav1.Condition{Type: authv1beta1.ConditionTypeSecretCreated, Status: metav1.ConditionFalse, Reason: ReasonNotAClusterNamespace,
		Message: fmt.Sprintf("namespace %s is no ManagedCluster's, so no agent serves this ManagedServiceAccount: create it in the namespace of the cluster that should have the ServiceAccount", ns)}
}
