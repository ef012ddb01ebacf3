//go:build integration

package api

import (
	"fmt"
	"strings"

	multiclusterv1alpha1 "github.com/flotilla/flotilla/api/multicluster/v1alpha1"
)

// placementDecisionWith returns a PlacementDecision listing n clusters.
func placementDecisionWith(n int) string {
	var b strings.Builder
	b.WriteString(`
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: PlacementDecision
metadata: {name: many-clusters}
decisions:
`)
	for i := range n {
		fmt.Fprintf(&b, "- clusterProfileRef: {name: cluster-%d}\n", i)
	}
	return b.String()
}

func init() {
	addToScheme = append(addToScheme, multiclusterv1alpha1.AddToScheme)
	addValidationCases(map[string]validationCase{
		"PlacementDecision: more than 100 decisions in one slice": {
			bad:     placementDecisionWith(101),
			wantErr: []string{"decisions: Too many: 101", "must have at most 100 items"},
			good:    placementDecisionWith(100),
		},
		"ClusterProfile: empty cluster manager name": {
			bad: `
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ClusterProfile
metadata: {name: cluster1}
spec: {clusterManager: {name: ""}}`,
			wantErr: []string{"spec.clusterManager.name", "should be at least 1 chars long"},
			good: `
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ClusterProfile
metadata: {name: cluster1}
spec: {clusterManager: {name: open-cluster-management}}`,
		},
	})
}
