package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"time"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
)

// cachedSpecHash is set, in the hub's cache only, on each copy whose spec TrimCopy dropped: the
// hash of that spec, which apply compares with the hash of the spec the copy should have.
const cachedSpecHash = "policy.flotilla.io/cached-spec-hash"

// cachedReportedAt is set, in the hub's cache only, on each copy whose status details TrimCopy
// dropped: when the cluster last reported a new result (its latest history entry, RFC 3339), which
// a rollout compares with when it turned the copy to enforce.
const cachedReportedAt = "policy.flotilla.io/cached-reported-at"

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
	if at := lastReport(&p.Status); !at.IsZero() {
		p.Annotations[cachedReportedAt] = at.UTC().Format(time.RFC3339)
	}
	p.Spec = policyv1.PolicySpec{}
	p.Status = policyv1.PolicyStatus{ComplianceState: p.Status.ComplianceState}
	return p, nil
}

// lastReport is when the cluster last reported a new result for any template of a copy.
func lastReport(st *policyv1.PolicyStatus) time.Time {
	var at time.Time
	for _, d := range st.Details {
		if d != nil && len(d.History) > 0 && d.History[0].LastTimestamp.After(at) {
			at = d.History[0].LastTimestamp.Time
		}
	}
	return at
}

// reportedAt is lastReport of a copy as the cache holds it (or whole).
func reportedAt(p *policyv1.Policy) time.Time {
	if s, ok := p.Annotations[cachedReportedAt]; ok {
		t, _ := time.Parse(time.RFC3339, s)
		return t
	}
	return lastReport(&p.Status)
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
	if _, reported := annotations[cachedReportedAt]; hashed || reported {
		annotations = maps.Clone(annotations)
		delete(annotations, cachedSpecHash)
		delete(annotations, cachedReportedAt)
	}
	if !maps.Equal(cur.Labels, want.Labels) || !maps.Equal(annotations, want.Annotations) {
		return false
	}
	if hashed {
		return h == specHash(&want.Spec)
	}
	return specHash(&cur.Spec) == specHash(&want.Spec)
}
