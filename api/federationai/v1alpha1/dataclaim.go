package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// DataClaim is the claim whose value is each client's data path: the key of the last claim
// selector with operator Exists in spec.client.placement, as OCM's controller picks it; "" when
// there is none.
func (s *FederatedLearningSpec) DataClaim() string {
	claim := ""
	for _, p := range s.Client.Placement.Predicates {
		for _, e := range p.RequiredClusterSelector.ClaimSelector.MatchExpressions {
			if e.Operator == metav1.LabelSelectorOpExists {
				claim = e.Key
			}
		}
	}
	return claim
}
