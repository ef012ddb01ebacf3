package kueue

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// ownerRef is the owner reference an object wanted by ac carries: not a controller reference,
// since several checks may want one object, and not blocking ac's deletion.
func ownerRef(ac *kueuev1beta2.AdmissionCheck) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: kueuev1beta2.GroupVersion.String(), Kind: "AdmissionCheck",
		Name: ac.Name, UID: ac.UID, BlockOwnerDeletion: ptr.To(false),
	}
}

// ownedBy says whether refs name the AdmissionCheck with uid.
func ownedBy(refs []metav1.OwnerReference, uid types.UID) bool {
	for _, r := range refs {
		if r.UID == uid {
			return true
		}
	}
	return false
}

// withOwner returns refs with ref added, and whether it was missing.
func withOwner(refs []metav1.OwnerReference, ref metav1.OwnerReference) ([]metav1.OwnerReference, bool) {
	if ownedBy(refs, ref.UID) {
		return refs, false
	}
	return append(refs, ref), true
}

// withoutOwner returns refs without the owner with uid.
func withoutOwner(refs []metav1.OwnerReference, uid types.UID) []metav1.OwnerReference {
	out := make([]metav1.OwnerReference, 0, len(refs))
	for _, r := range refs {
		if r.UID != uid {
			out = append(out, r)
		}
	}
	return out
}

// managed says whether the hub wrote obj.
func managed(obj metav1.Object) bool { return obj.GetLabels()[ManagedLabel] == ManagedValue }
