package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
)

// cachedSpecHash is set, in the hub's cache only, on each copy whose spec TrimCopy dropped: the
// hash of that spec, which apply compares with the hash of the spec the copy should have.
const cachedSpecHash = "policy.flotilla.io/cached-spec-hash"

// TrimCopy is the hub cache's transform of Policies: a copy keeps its metadata (less managed
// fields), its compliance and the hash of its spec, not its spec or its status details. At 100
// policies on 1,000 clusters the hub holds 100,000 copies, each carrying its root's whole spec;
// the propagator needs only to know whether a copy's spec is the one it should have, and the
// compliance it reports. Roots are kept whole.
func TrimCopy(obj any) (any, error) {
	p, ok := obj.(*policyv1.Policy)
	if !ok {
		return obj, nil
	}
	p.ManagedFields = nil
	if !p.IsReplicated() {
		return p, nil
	}
	p.Annotations = maps.Clone(p.Annotations)
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[cachedSpecHash] = specHash(&p.Spec)
	p.Spec = policyv1.PolicySpec{}
	p.Status = policyv1.PolicyStatus{ComplianceState: p.Status.ComplianceState}
	return p, nil
}

// specHash is a digest of a policy's spec as JSON.
func specHash(s *policyv1.PolicySpec) string {
	b, err := json.Marshal(s)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// sameCopy reports whether the copy cur (from the cache) is want: same labels, annotations (the
// cache's hash aside) and spec (by hash when the cache dropped it).
func sameCopy(cur, want *policyv1.Policy) bool {
	annotations := cur.Annotations
	h, hashed := annotations[cachedSpecHash]
	if hashed {
		annotations = maps.Clone(annotations)
		delete(annotations, cachedSpecHash)
	}
	if !maps.Equal(cur.Labels, want.Labels) || !maps.Equal(annotations, want.Annotations) {
		return false
	}
	if hashed {
		return h == specHash(&want.Spec)
	}
	return specHash(&cur.Spec) == specHash(&want.Spec)
}
