//go:build integration

package api

import (
	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	policyv1beta1 "github.com/flotilla/flotilla/api/policy/v1beta1"
)

func init() {
	addToScheme = append(addToScheme, policyv1.AddToScheme, policyv1beta1.AddToScheme)
	addValidationCases(map[string]validationCase{
		"Policy: a remediationAction OCM does not know": {
			bad: `
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: plc-audit}
spec: {disabled: false, remediationAction: audit, policy-templates: []}`,
			wantErr: []string{"spec.remediationAction"},
			good: `
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: plc-inform}
spec: {disabled: false, remediationAction: Inform, policy-templates: []}`,
		},
		"PlacementBinding: a subject that is not a policy": {
			bad: `
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: pb-role}
placementRef: {apiGroup: cluster.open-cluster-management.io, kind: Placement, name: p}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Role, name: admin}]`,
			wantErr: []string{"subjects[0].kind", "subjects[0].apiGroup"},
			good: `
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: pb-policy}
placementRef: {apiGroup: cluster.open-cluster-management.io, kind: Placement, name: p}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: PolicySet, name: s}]`,
		},
		"ConfigurationPolicy: an unknown complianceType": {
			bad: `
apiVersion: policy.open-cluster-management.io/v1
kind: ConfigurationPolicy
metadata: {name: cp-shouldhave}
spec:
  remediationAction: inform
  object-templates: [{complianceType: shouldhave, objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: x}}}]`,
			wantErr: []string{"spec.object-templates[0].complianceType"},
			good: `
apiVersion: policy.open-cluster-management.io/v1
kind: ConfigurationPolicy
metadata: {name: cp-musthave}
spec:
  remediationAction: inform
  object-templates: [{complianceType: MustHave, objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: x}}}]`,
		},
	})
}
