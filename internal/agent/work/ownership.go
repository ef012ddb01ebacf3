package work

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// Ownership: every object the agent applies carries an ownerReference to the AppliedManifestWork
// of each work that applied it, as OCM marks them. An object is deleted only when this work is
// its last such owner; otherwise the agent drops its own reference and leaves it. An object
// without this work's reference (CreateOnly found it there, ReadOnly reads it) is never deleted.

const appliedKind = "AppliedManifestWork"

// ownerRef is the reference to an AppliedManifestWork that marks an object it applied.
func ownerRef(name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: workv1.GroupVersion.String(), Kind: appliedKind, Name: name, UID: uid}
}

func isApplied(r metav1.OwnerReference) bool {
	return r.Kind == appliedKind && r.APIVersion == workv1.GroupVersion.String()
}

// otherOwners returns the names of the AppliedManifestWorks other than self that own an object.
func otherOwners(refs []metav1.OwnerReference, self types.UID) []string {
	var out []string
	for _, r := range refs {
		if isApplied(r) && r.UID != self {
			out = append(out, r.Name)
		}
	}
	return out
}

// hasOwner reports whether refs hold self.
func hasOwner(refs []metav1.OwnerReference, self types.UID) bool {
	for _, r := range refs {
		if r.UID == self {
			return true
		}
	}
	return false
}

// withOwner returns refs with ref added, and whether it was missing.
func withOwner(refs []metav1.OwnerReference, ref metav1.OwnerReference) ([]metav1.OwnerReference, bool) {
	if hasOwner(refs, ref.UID) {
		return refs, false
	}
	return append(append([]metav1.OwnerReference(nil), refs...), ref), true
}

// withoutOwner returns refs without self.
func withoutOwner(refs []metav1.OwnerReference, self types.UID) []metav1.OwnerReference {
	var out []metav1.OwnerReference
	for _, r := range refs {
		if r.UID != self {
			out = append(out, r)
		}
	}
	return out
}

// removal is what the agent does to an object it no longer applies.
type removal int

const (
	// leave: the object is not this work's (not its owner, or another object now has its name).
	leave removal = iota
	// release: drop this work's ownerReference and keep the object (another work owns it too, or
	// the work orphans it).
	release
	// remove: delete the object; this work is its last owner.
	remove
)

func (r removal) String() string { return [...]string{"leave", "release", "remove"}[r] }

// decideRemoval says what to do with a live object this work applied (recorded with uid) and no
// longer applies or is being deleted.
func decideRemoval(live metav1.Object, recordedUID string, self types.UID, orphan bool) removal {
	if recordedUID != "" && string(live.GetUID()) != recordedUID {
		return leave // deleted and created again by someone else since
	}
	refs := live.GetOwnerReferences()
	if !hasOwner(refs, self) {
		return leave
	}
	if orphan || len(otherOwners(refs, self)) > 0 {
		return release
	}
	return remove
}

// orphaned reports whether the deletion option keeps res on the spoke when the work goes away.
func orphaned(opt *workv1.DeleteOption, res workv1.AppliedManifestResourceMeta) bool {
	if opt == nil {
		return false
	}
	switch opt.PropagationPolicy {
	case workv1.DeletePropagationPolicyTypeOrphan:
		return true
	case workv1.DeletePropagationPolicyTypeSelectivelyOrphan:
		if opt.SelectivelyOrphans == nil {
			return false
		}
		for _, r := range opt.SelectivelyOrphans.OrphaningRules {
			if r.Group == res.Group && r.Resource == res.Resource && r.Name == res.Name && r.Namespace == res.Namespace {
				return true
			}
		}
	}
	return false
}

// resourceKey identifies an applied resource regardless of version and uid.
type resourceKey struct{ Group, Resource, Namespace, Name string }

func keyOf(r workv1.AppliedManifestResourceMeta) resourceKey {
	return resourceKey{r.Group, r.Resource, r.Namespace, r.Name}
}

// nextApplied returns the resources to record now and those to remove from the spoke: every
// resource applied this round is recorded; a recorded resource still in the work but not applied
// this round (it failed) stays recorded; a recorded resource no longer in the work is stale.
func nextApplied(previous, applied []workv1.AppliedManifestResourceMeta, inWork map[resourceKey]bool) (record, stale []workv1.AppliedManifestResourceMeta) {
	seen := map[resourceKey]bool{}
	for _, r := range applied {
		if !seen[keyOf(r)] {
			seen[keyOf(r)] = true
			record = append(record, r)
		}
	}
	for _, r := range previous {
		k := keyOf(r)
		switch {
		case seen[k]:
			if r.UID != "" && !containsUID(applied, r.UID) {
				// Same name, new object: the old one is gone already.
				continue
			}
		case inWork[k]:
			seen[k] = true
			record = append(record, r)
		default:
			stale = append(stale, r)
		}
	}
	return record, stale
}

func containsUID(rs []workv1.AppliedManifestResourceMeta, uid string) bool {
	for _, r := range rs {
		if r.UID == uid {
			return true
		}
	}
	return false
}
