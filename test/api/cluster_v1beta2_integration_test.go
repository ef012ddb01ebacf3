//go:build integration

package api

import clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"

func init() {
	addToScheme = append(addToScheme, clusterv1beta2.AddToScheme)
	addValidationCases(map[string]validationCase{
		"ManagedClusterSetBinding: name differs from spec.clusterSet": {
			bad: `
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSetBinding
metadata: {name: gpu}
spec: {clusterSet: training}`,
			wantErr: []string{"metadata.name must equal spec.clusterSet"},
			good: `
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSetBinding
metadata: {name: training}
spec: {clusterSet: training}`,
		},
		"ManagedClusterSet: LabelSelector type without a selector": {
			bad: `
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSet
metadata: {name: by-label}
spec: {clusterSelector: {selectorType: LabelSelector}}`,
			wantErr: []string{"selectorType LabelSelector needs spec.clusterSelector.labelSelector"},
			good: `
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSet
metadata: {name: by-label}
spec: {clusterSelector: {selectorType: LabelSelector, labelSelector: {matchLabels: {gpu: "true"}}}}`,
		},
		"ManagedClusterSet: selector type not in the enum": {
			bad: `
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSet
metadata: {name: bad-type}
spec: {clusterSelector: {selectorType: ByName}}`,
			wantErr: []string{`spec.clusterSelector.selectorType: Unsupported value: "ByName"`, `"ExclusiveClusterSetLabel", "LabelSelector"`},
			good: `
apiVersion: cluster.open-cluster-management.io/v1beta2
kind: ManagedClusterSet
metadata: {name: bad-type}
spec: {clusterSelector: {selectorType: ExclusiveClusterSetLabel}}`,
		},
	})
}
