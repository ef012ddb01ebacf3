package clusterprofile

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	multiclusterv1alpha1 "github.com/flotilla/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/conditions"
	"github.com/flotilla/flotilla/internal/hub/clusterset"
)

// ReasonConditionMissing is the reason of a mirrored condition whose source condition the
// ManagedCluster does not have yet.
const ReasonConditionMissing = "ManagedClusterConditionMissing"

// maxVersionLength is the longest status.version.kubernetes a ClusterProfile accepts.
const maxVersionLength = 64

// managed reports whether p is one of the hub's profiles.
func managed(p *multiclusterv1alpha1.ClusterProfile) bool {
	return p.Labels[multiclusterv1alpha1.LabelClusterManagerKey] == multiclusterv1alpha1.ClusterManagerName
}

// boundSets returns the names of the sets that bindings bind: those whose Bound condition is True
// for the binding's current generation (a condition written for an earlier spec may name another
// set) and that are not being deleted.
func boundSets(bindings []clusterv1beta2.ManagedClusterSetBinding) map[string]bool {
	bound := map[string]bool{}
	for i := range bindings {
		b := &bindings[i]
		c := meta.FindStatusCondition(b.Status.Conditions, clusterv1beta2.ClusterSetBindingBoundType)
		if b.DeletionTimestamp.IsZero() && c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == b.Generation {
			bound[b.Spec.ClusterSet] = true
		}
	}
	return bound
}

// desiredProfiles returns, by name, the ClusterProfiles the hub keeps in namespace ns: one per
// cluster, not being deleted, in a set bound there. sets and clusters may hold more than that
// (the whole cache); sets being deleted and sets with an invalid selector (their status says so)
// contribute no cluster. Status conditions carry neither transition time nor observed generation:
// mergeStatus adds them. allowLocal lets access providers name loopback and link-local addresses
// (accessProvider).
func desiredProfiles(ns string, bindings []clusterv1beta2.ManagedClusterSetBinding, sets []clusterv1beta2.ManagedClusterSet,
	clusters []clusterv1.ManagedCluster, allowLocal bool) map[string]*multiclusterv1alpha1.ClusterProfile {
	bound := boundSets(bindings)
	members := map[string]bool{}
	for i := range sets {
		if !bound[sets[i].Name] || !sets[i].DeletionTimestamp.IsZero() {
			continue
		}
		names, err := clusterset.Members(&sets[i], clusters)
		if err != nil {
			continue
		}
		for _, n := range names {
			members[n] = true
		}
	}
	profiles := map[string]*multiclusterv1alpha1.ClusterProfile{}
	for i := range clusters {
		mc := &clusters[i]
		if members[mc.Name] && mc.DeletionTimestamp.IsZero() {
			profiles[mc.Name] = profileFor(ns, mc, allowLocal)
		}
	}
	return profiles
}

// profileFor is the profile of cluster mc in namespace ns.
func profileFor(ns string, mc *clusterv1.ManagedCluster, allowLocal bool) *multiclusterv1alpha1.ClusterProfile {
	return &multiclusterv1alpha1.ClusterProfile{
		ObjectMeta: metav1.ObjectMeta{
			Name: mc.Name, Namespace: ns,
			Labels: map[string]string{
				multiclusterv1alpha1.LabelClusterManagerKey: multiclusterv1alpha1.ClusterManagerName,
				multiclusterv1alpha1.LabelClusterNameKey:    mc.Name,
			},
		},
		Spec: multiclusterv1alpha1.ClusterProfileSpec{
			DisplayName:    mc.Name,
			ClusterManager: multiclusterv1alpha1.ClusterManager{Name: multiclusterv1alpha1.ClusterManagerName},
		},
		Status: withAccessProvider(statusFor(mc), mc, allowLocal),
	}
}

// statusFor is what a profile shows of cluster mc's status (the access provider, from its spec,
// aside).
func statusFor(mc *clusterv1.ManagedCluster) multiclusterv1alpha1.ClusterProfileStatus {
	var st multiclusterv1alpha1.ClusterProfileStatus
	// A version the profile cannot hold is left out rather than cut: a truncated version would
	// read as another version.
	if v := mc.Status.Version.Kubernetes; len(v) <= maxVersionLength {
		st.Version.Kubernetes = v
	}
	// Properties are a map keyed by name; the claims list is not, so the first claim of a name wins.
	seen := map[string]bool{}
	for _, c := range mc.Status.ClusterClaims {
		if seen[c.Name] {
			continue
		}
		seen[c.Name] = true
		st.Properties = append(st.Properties, multiclusterv1alpha1.Property{Name: c.Name, Value: c.Value})
	}
	st.Conditions = []metav1.Condition{
		mirror(mc, clusterv1.ManagedClusterConditionAvailable, multiclusterv1alpha1.ClusterConditionControlPlaneHealthy),
		mirror(mc, clusterv1.ManagedClusterConditionJoined, multiclusterv1alpha1.ClusterConditionJoined),
	}
	return st
}

// withAccessProvider adds to st the hub's access provider for mc, and the condition that says
// whether there is one. Both lists hold the one entry (mergeStatus copies it into each):
// consumers built before the rename read credentialProviders.
func withAccessProvider(st multiclusterv1alpha1.ClusterProfileStatus, mc *clusterv1.ManagedCluster, allowLocal bool) multiclusterv1alpha1.ClusterProfileStatus {
	p, c := accessProvider(mc, allowLocal)
	if p != nil {
		st.AccessProviders = []multiclusterv1alpha1.AccessProvider{*p}
		st.CredentialProviders = st.AccessProviders
	}
	st.Conditions = append(st.Conditions, c)
	return st
}

// mirror copies mc's condition from as a condition of type to; Unknown when mc has no such
// condition.
func mirror(mc *clusterv1.ManagedCluster, from, to string) metav1.Condition {
	c := meta.FindStatusCondition(mc.Status.Conditions, from)
	if c == nil {
		return metav1.Condition{Type: to, Status: metav1.ConditionUnknown, Reason: ReasonConditionMissing,
			Message: fmt.Sprintf("ManagedCluster %s has not reported condition %s yet", mc.Name, from)}
	}
	reason := c.Reason
	if reason == "" { // the API requires one; an object built in code may lack it
		reason = from
	}
	return metav1.Condition{Type: to, Status: c.Status, Reason: reason, Message: c.Message}
}

// mergeStatus returns cur with the fields the hub owns set as in want: the version, the
// properties, the hub's access provider (ProviderName) in both provider lists, and want's
// conditions (observed at generation, transitioned at now if their status changed). Conditions
// of other types and other providers' entries are kept. changed says whether the result differs
// from cur, ignoring transition times.
func mergeStatus(cur, want multiclusterv1alpha1.ClusterProfileStatus, generation int64,
	now metav1.Time) (multiclusterv1alpha1.ClusterProfileStatus, bool) {
	out := *cur.DeepCopy()
	out.Version = want.Version
	out.Properties = want.DeepCopy().Properties
	out.AccessProviders = withProvider(cur.AccessProviders, hubProvider(want.AccessProviders))
	out.CredentialProviders = withProvider(cur.CredentialProviders, hubProvider(want.CredentialProviders))
	for _, c := range want.Conditions {
		c.ObservedGeneration, c.LastTransitionTime = generation, now // kept by SetStatusCondition unless the status changes
		meta.SetStatusCondition(&out.Conditions, c)
	}
	changed := out.Version != cur.Version ||
		!equality.Semantic.DeepEqual(out.Properties, cur.Properties) ||
		!equality.Semantic.DeepEqual(out.AccessProviders, cur.AccessProviders) ||
		!equality.Semantic.DeepEqual(out.CredentialProviders, cur.CredentialProviders) ||
		!conditions.Equal(cur.Conditions, out.Conditions)
	return out, changed
}

// metaDiffers reports whether mergeMeta would change cur, without changing it.
func metaDiffers(cur, want *multiclusterv1alpha1.ClusterProfile) bool {
	for k, v := range want.Labels {
		if l, ok := cur.Labels[k]; !ok || l != v {
			return true
		}
	}
	return cur.Spec.DisplayName != want.Spec.DisplayName
}

// mergeMeta sets on cur the labels and spec fields want has, keeping labels others added, and
// reports whether anything changed. spec.clusterManager is immutable and not touched.
func mergeMeta(cur, want *multiclusterv1alpha1.ClusterProfile) bool {
	if !metaDiffers(cur, want) {
		return false
	}
	if cur.Labels == nil {
		cur.Labels = map[string]string{}
	}
	maps.Copy(cur.Labels, want.Labels)
	cur.Spec.DisplayName = want.Spec.DisplayName
	return true
}
