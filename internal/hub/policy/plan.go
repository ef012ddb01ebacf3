package policy

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	policyv1beta1 "github.com/flotilla/flotilla/api/policy/v1beta1"
	"github.com/flotilla/flotilla/internal/core/rollout"
	"github.com/flotilla/flotilla/internal/policytemplate"
)

// world is what a root policy's propagation depends on, read from the hub's cache: the
// PlacementBindings and PolicySets of its namespace, and the decided clusters of each Placement
// there that exists (a missing Placement has no entry).
type world struct {
	bindings []policyv1.PlacementBinding
	sets     map[string]*policyv1beta1.PolicySet
	decided  map[string][]string
	// groups is each decided cluster's decision group in the first placement that decides it.
	groups map[string]rollout.GroupKey
}

// propagation is where a root policy goes: the bindings that place it (the root's
// status.placement) and each placed cluster with whether a binding makes it enforce.
type propagation struct {
	placements []*policyv1.Placement
	clusters   map[string]bool // cluster -> enforce override
}

// plan decides a root policy's propagation as OCM's propagator does. A binding places the policy
// when a subject names it, or names a PolicySet that lists it; then every cluster its Placement
// decides gets the policy, except those the set excludes for it when placed through the set. A
// restricted binding (subFilter) places nothing itself: it only lends its override to clusters
// other bindings place. A disabled policy is placed nowhere, but its placements are still listed.
func plan(root *policyv1.Policy, w world) propagation {
	p := propagation{clusters: map[string]bool{}}
	restricted := map[string][]string{} // binding -> clusters it would place
	enforcing := map[string]bool{}      // binding -> bindingOverrides.remediationAction enforce
	var restrictedPlacements = map[string][]*policyv1.Placement{}
	for i := range w.bindings {
		b := &w.bindings[i]
		entries, clusters := bindingPlaces(root, b, w)
		if len(entries) == 0 {
			continue
		}
		enforcing[b.Name] = strings.EqualFold(b.BindingOverrides.RemediationAction, string(policyv1.Enforce))
		if b.SubFilter == policyv1.Restricted {
			restricted[b.Name] = clusters
			restrictedPlacements[b.Name] = entries
			continue
		}
		p.placements = append(p.placements, entries...)
		if root.Spec.Disabled {
			continue
		}
		for _, c := range clusters {
			p.clusters[c] = p.clusters[c] || enforcing[b.Name]
		}
	}
	for _, name := range slices.Sorted(maps.Keys(restricted)) {
		shared := false
		for _, c := range restricted[name] {
			if enforce, placed := p.clusters[c]; placed {
				shared = true
				p.clusters[c] = enforce || enforcing[name]
			}
		}
		if shared {
			p.placements = append(p.placements, restrictedPlacements[name]...)
		}
	}
	slices.SortStableFunc(p.placements, func(a, b *policyv1.Placement) int {
		return cmp.Compare(a.PlacementBinding+" "+a.Placement+" "+a.PolicySet, b.PlacementBinding+" "+b.Placement+" "+b.PolicySet)
	})
	return p
}

// bindingPlaces returns the status entries of binding b for root (none when b does not place
// it) and the clusters it places root on.
func bindingPlaces(root *policyv1.Policy, b *policyv1.PlacementBinding, w world) ([]*policyv1.Placement, []string) {
	placement := ""
	decided, ok := w.decided[b.PlacementRef.Name]
	if ok && isPlacement(b.PlacementRef) {
		placement = b.PlacementRef.Name
	} else {
		decided = nil // OCM's PlacementRule is not served: it decides nothing here
	}
	var entries []*policyv1.Placement
	clusters := map[string]bool{}
	direct, seenSets := false, map[string]bool{}
	for _, s := range b.Subjects {
		if s.APIGroup != policyv1.GroupVersion.Group {
			continue
		}
		switch {
		case s.Kind == policyv1.Kind && s.Name == root.Name && !direct:
			direct = true
			entries = append(entries, &policyv1.Placement{PlacementBinding: b.Name, Placement: placement})
			for _, c := range decided {
				clusters[c] = true
			}
		case s.Kind == policyv1.PolicySetKind && !seenSets[s.Name]:
			seenSets[s.Name] = true
			set := w.sets[s.Name]
			if set == nil || !slices.Contains(set.Spec.Policies, policyv1beta1.NonEmptyString(root.Name)) {
				continue
			}
			excluded := excludedClusters(set, root.Name)
			e := &policyv1.Placement{PlacementBinding: b.Name, Placement: placement, PolicySet: s.Name}
			for _, c := range slices.Sorted(maps.Keys(excluded)) {
				e.Exclusions = append(e.Exclusions, policyv1.PolicyExclusion{ClusterName: c})
			}
			entries = append(entries, e)
			for _, c := range decided {
				if !excluded[c] {
					clusters[c] = true
				}
			}
		}
	}
	return entries, slices.Sorted(maps.Keys(clusters))
}

func isPlacement(ref policyv1.PlacementSubject) bool {
	return ref.Kind == "Placement" && ref.APIGroup == clusterv1beta1.GroupVersion.Group
}

// excludedClusters are the clusters set's exclusions keep policy off.
func excludedClusters(set *policyv1beta1.PolicySet, policy string) map[string]bool {
	out := map[string]bool{}
	for _, e := range set.Spec.Exclusions {
		if string(e.PolicyName) != policy {
			continue
		}
		for _, c := range e.ClusterNames {
			out[string(c)] = true
		}
	}
	return out
}

// replica is root's copy for cluster, as OCM's propagator builds it: the root's spec and
// metadata (all labels and annotations unless spec.copyPolicyMetadata is false, then only those
// of policy.open-cluster-management.io) without status, finalizers or owners; the framework's
// labels; Argo CD told to ignore it; and remediationAction enforce when a binding overrides it.
func replica(root *policyv1.Policy, cluster string, enforce bool) *policyv1.Policy {
	name := policyv1.ReplicatedName(root.Namespace, root.Name)
	copyAll := root.Spec.CopyPolicyMetadata == nil || *root.Spec.CopyPolicyMetadata
	keep := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			if copyAll || strings.HasPrefix(k, policyv1.GroupVersion.Group+"/") {
				out[k] = v
			}
		}
		return out
	}
	labels, annotations := keep(root.Labels), keep(root.Annotations)
	delete(annotations, policytemplate.TriggerUpdateAnnotation) // the root's alone, as in OCM
	labels[policyv1.ClusterNameLabel] = cluster
	labels[policyv1.ClusterNamespaceLabel] = cluster
	labels[policyv1.RootPolicyLabel] = name
	annotations[policyv1.ArgoCDCompareOptionsAnnotation] = "IgnoreExtraneous"
	annotations[policyv1.RootPolicyUIDAnnotation] = string(root.UID)
	r := &policyv1.Policy{
		TypeMeta:   metav1.TypeMeta{APIVersion: policyv1.GroupVersion.String(), Kind: policyv1.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster, Labels: labels, Annotations: annotations},
	}
	root.Spec.DeepCopyInto(&r.Spec)
	if enforce && !strings.EqualFold(string(r.Spec.RemediationAction), string(policyv1.Enforce)) {
		r.Spec.RemediationAction = policyv1.Enforce
	}
	return r
}

// clusterStatus is the root's status.status: one entry per placed cluster, sorted, with the
// compliance its replicated policy reports (none until it reports).
func clusterStatus(placed map[string]bool, reported map[string]policyv1.ComplianceState) []*policyv1.CompliancePerClusterStatus {
	var out []*policyv1.CompliancePerClusterStatus // nil when empty, as the API server returns it
	for _, c := range slices.Sorted(maps.Keys(placed)) {
		out = append(out, &policyv1.CompliancePerClusterStatus{ClusterName: c, ClusterNamespace: c, ComplianceState: reported[c]})
	}
	return out
}

// rootCompliance sums the clusters' states as OCM does: NonCompliant if any is, else Pending if
// any is, else none if any has not reported (or there are no clusters), else Compliant.
func rootCompliance(clusters []*policyv1.CompliancePerClusterStatus) policyv1.ComplianceState {
	if len(clusters) == 0 {
		return ""
	}
	pending, unknown := false, false
	for _, c := range clusters {
		switch c.ComplianceState {
		case policyv1.NonCompliant:
			return policyv1.NonCompliant
		case policyv1.Pending:
			pending = true
		case policyv1.Compliant:
		default:
			unknown = true
		}
	}
	switch {
	case pending:
		return policyv1.Pending
	case unknown:
		return ""
	}
	return policyv1.Compliant
}
