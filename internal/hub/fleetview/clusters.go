package fleetview

import (
	"time"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/core/gpuview"
	"github.com/flotilla/flotilla/internal/hub/clusterset"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cluster is one managed cluster.
type Cluster struct {
	Name     string `json:"name"`
	Accepted bool   `json:"accepted" jsonschema:"the hub accepts the cluster (spec.hubAcceptsClient)"`
	Joined   string `json:"joined" jsonschema:"status of the ManagedClusterJoined condition: True, False or Unknown"`
	// Available is the ManagedClusterConditionAvailable condition: True when the cluster's API
	// server is healthy, False when not, Unknown when the agent stopped renewing its lease.
	Available           string `json:"available" jsonschema:"status of the ManagedClusterConditionAvailable condition: True, False or Unknown (the agent stopped renewing its lease)"`
	AvailableReason     string `json:"availableReason,omitempty"`
	AvailableMessage    string `json:"availableMessage,omitempty"`
	AvailableForSeconds *int64 `json:"availableForSeconds,omitempty" jsonschema:"seconds since the availability last changed"`
	// LeaseRenewedSecondsAgo is the heartbeat: seconds since the agent last renewed its lease;
	// absent when the cluster has no lease or it could not be read.
	LeaseRenewedSecondsAgo *int64            `json:"leaseRenewedSecondsAgo,omitempty" jsonschema:"seconds since the agent last renewed its lease (the heartbeat); absent when unknown"`
	LeaseDurationSeconds   int32             `json:"leaseDurationSeconds" jsonschema:"how often the agent renews its lease; the hub marks the cluster Unknown after 5 periods without"`
	Taints                 []Taint           `json:"taints"`
	Sets                   []string          `json:"sets" jsonschema:"the ManagedClusterSets the cluster belongs to"`
	Labels                 map[string]string `json:"labels"`
	Claims                 map[string]string `json:"claims" jsonschema:"the cluster's ClusterClaims (status.clusterClaims)"`
	GPUs                   map[string]int64  `json:"gpus" jsonschema:"allocatable GPUs by model, from the agent's claims"`
	KubernetesVersion      string            `json:"kubernetesVersion,omitempty"`
	Deleting               bool              `json:"deleting,omitempty"`
}

// Taint is one of a cluster's taints.
type Taint struct {
	Key             string `json:"key"`
	Value           string `json:"value,omitempty"`
	Effect          string `json:"effect"`
	AddedSecondsAgo *int64 `json:"addedSecondsAgo,omitempty"`
}

// ClusterReports describes clusters at now; sets and leases are the hub's (either may be empty
// when they could not be read).
func ClusterReports(clusters []clusterv1.ManagedCluster, sets []clusterv1beta2.ManagedClusterSet, leases []coordinationv1.Lease, now time.Time) []Cluster {
	renewed := map[string]time.Time{}
	for _, l := range leases {
		if l.Name != clusterv1.ManagedClusterLeaseName {
			continue
		}
		switch {
		case l.Spec.RenewTime != nil:
			renewed[l.Namespace] = l.Spec.RenewTime.Time
		case l.Spec.AcquireTime != nil:
			renewed[l.Namespace] = l.Spec.AcquireTime.Time
		}
	}
	out := make([]Cluster, 0, len(clusters))
	for i := range clusters {
		c := &clusters[i]
		r := Cluster{
			Name:                 c.Name,
			Accepted:             c.Spec.HubAcceptsClient,
			Joined:               ConditionStatus(c.Status.Conditions, clusterv1.ManagedClusterConditionJoined),
			Available:            ConditionStatus(c.Status.Conditions, clusterv1.ManagedClusterConditionAvailable),
			LeaseDurationSeconds: int32(c.LeaseDuration() / time.Second),
			Taints:               make([]Taint, 0, len(c.Spec.Taints)),
			Sets:                 clusterset.SetsOf(c, sets),
			Labels:               c.Labels,
			Claims:               map[string]string{},
			GPUs:                 gpuview.ByModel(c.Status.ClusterClaims),
			KubernetesVersion:    c.Status.Version.Kubernetes,
			Deleting:             !c.DeletionTimestamp.IsZero(),
		}
		if r.Sets == nil {
			r.Sets = []string{}
		}
		if r.Labels == nil {
			r.Labels = map[string]string{}
		}
		if a := meta.FindStatusCondition(c.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); a != nil {
			r.AvailableReason, r.AvailableMessage = a.Reason, a.Message
			r.AvailableForSeconds = SecondsSince(&a.LastTransitionTime, now)
		}
		if t, ok := renewed[c.Name]; ok {
			r.LeaseRenewedSecondsAgo = SecondsSince(&metav1.Time{Time: t}, now)
		}
		for _, t := range c.Spec.Taints {
			r.Taints = append(r.Taints, Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect), AddedSecondsAgo: SecondsSince(t.TimeAdded, now)})
		}
		for _, cl := range c.Status.ClusterClaims {
			r.Claims[cl.Name] = cl.Value
		}
		out = append(out, r)
	}
	return out
}

// ConditionStatus is the status of the condition of type typ, "Unknown" when it is absent.
func ConditionStatus(conds []metav1.Condition, typ string) string {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return string(c.Status)
	}
	return string(metav1.ConditionUnknown)
}

// SecondsSince is the whole seconds from t to now (never negative: clocks differ), nil when t is.
func SecondsSince(t *metav1.Time, now time.Time) *int64 {
	if t == nil || t.IsZero() {
		return nil
	}
	d := max(now.Sub(t.Time), 0)
	n := int64(d / time.Second)
	return &n
}
