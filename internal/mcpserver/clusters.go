package mcpserver

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/gpuview"
	"github.com/flotilla/flotilla/internal/hub/clusterset"
)

// ClustersInput are list_clusters' arguments.
type ClustersInput struct {
	Names         []string `json:"names,omitempty" jsonschema:"only these clusters (default: every cluster the hub has)"`
	LabelSelector string   `json:"labelSelector,omitempty" jsonschema:"only clusters whose labels match this selector, as kubectl -l takes it: region=us-east,gpu (default: every cluster)"`
}

// ClustersOutput is list_clusters' answer.
type ClustersOutput struct {
	Clusters []Cluster `json:"clusters"`
	// Notes say what could not be read (leases, sets) and so is missing from the clusters.
	Notes []string `json:"notes,omitempty"`
}

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

func (s *server) addClusterTools(m *mcp.Server) {
	addTool(m, &mcp.Tool{Name: "list_clusters", Annotations: readOnly,
		Description: "List the fleet's managed clusters: acceptance, availability, heartbeat (seconds since the lease was renewed), " +
			"taints, cluster sets, labels, claims and allocatable GPUs by model."}, s.listClusters)
	addTool(m, &mcp.Tool{Name: "gpu_capacity", Annotations: readOnly,
		Description: "GPU capacity of the fleet per model, per cluster and per node: allocatable GPUs from the agents' claims, and live " +
			"free GPUs with how many nodes have at least k free from each cluster's ResourceUsage (the resource-usage add-on). " +
			"Free figures count only when current (usage: current); expired ones are shown but not added up."}, s.gpuCapacity)
}

func (s *server) listClusters(ctx context.Context, _ *mcp.CallToolRequest, in ClustersInput) (*mcp.CallToolResult, ClustersOutput, error) {
	sel, err := parseSelector("labelSelector", in.LabelSelector)
	if err != nil {
		return nil, ClustersOutput{}, err
	}
	for _, n := range in.Names {
		if err := checkName("names", n, true); err != nil {
			return nil, ClustersOutput{}, err
		}
	}
	clusters, err := s.clusters(ctx, in.Names, sel)
	if err != nil {
		return nil, ClustersOutput{}, err
	}
	var notes []string
	var sets clusterv1beta2.ManagedClusterSetList
	if err := s.Client.List(ctx, &sets); err != nil {
		notes = append(notes, "cluster sets are missing: "+hubError(err, "listing managedclustersets", "").Error())
	}
	var leases coordinationv1.LeaseList
	if err := s.Client.List(ctx, &leases, client.MatchingFields{"metadata.name": clusterv1.ManagedClusterLeaseName}); err != nil {
		notes = append(notes, "heartbeats are missing: "+hubError(err, "listing the clusters' leases ("+clusterv1.ManagedClusterLeaseName+" in each cluster's namespace)", "").Error())
	}
	return nil, ClustersOutput{Clusters: clusterReports(clusters, sets.Items, leases.Items, s.Clock.Now()), Notes: notes}, nil
}

// clusters lists the clusters named (every one when none is) whose labels match sel, by name. A
// named cluster that is not on the hub is an error.
func (s *server) clusters(ctx context.Context, names []string, sel labels.Selector) ([]clusterv1.ManagedCluster, error) {
	var list clusterv1.ManagedClusterList
	if err := s.Client.List(ctx, &list, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, hubError(err, "listing managedclusters", "")
	}
	out := list.Items
	if len(names) > 0 {
		out = out[:0:0]
		for _, n := range names {
			i := slices.IndexFunc(list.Items, func(c clusterv1.ManagedCluster) bool { return c.Name == n })
			if i < 0 {
				if sel.Empty() {
					return nil, argError("names", "the hub has no cluster %q: list them with list_clusters and no arguments", n)
				}
				return nil, argError("names", "the hub has no cluster %q whose labels match %q: drop labelSelector, or list the clusters with list_clusters", n, sel)
			}
			out = append(out, list.Items[i])
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// clusterReports describes clusters at now; sets and leases are the hub's (either may be empty
// when they could not be read).
func clusterReports(clusters []clusterv1.ManagedCluster, sets []clusterv1beta2.ManagedClusterSet, leases []coordinationv1.Lease, now time.Time) []Cluster {
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
			Joined:               conditionStatus(c.Status.Conditions, clusterv1.ManagedClusterConditionJoined),
			Available:            conditionStatus(c.Status.Conditions, clusterv1.ManagedClusterConditionAvailable),
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
			r.AvailableForSeconds = secondsSince(&a.LastTransitionTime, now)
		}
		if t, ok := renewed[c.Name]; ok {
			r.LeaseRenewedSecondsAgo = secondsSince(&metav1.Time{Time: t}, now)
		}
		for _, t := range c.Spec.Taints {
			r.Taints = append(r.Taints, Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect), AddedSecondsAgo: secondsSince(t.TimeAdded, now)})
		}
		for _, cl := range c.Status.ClusterClaims {
			r.Claims[cl.Name] = cl.Value
		}
		out = append(out, r)
	}
	return out
}

// conditionStatus is the status of the condition of type typ, "Unknown" when it is absent.
func conditionStatus(conds []metav1.Condition, typ string) string {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return string(c.Status)
	}
	return string(metav1.ConditionUnknown)
}

// secondsSince is the whole seconds from t to now (never negative: clocks differ), nil when t is.
func secondsSince(t *metav1.Time, now time.Time) *int64 {
	if t == nil || t.IsZero() {
		return nil
	}
	d := max(now.Sub(t.Time), 0)
	n := int64(d / time.Second)
	return &n
}
