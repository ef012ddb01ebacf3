//go:build integration

package api

import (
	"strings"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
)

func init() {
	addToScheme = append(addToScheme, clusterv1.AddToScheme, clusterv1alpha1.AddToScheme)
	addValidationCases(map[string]validationCase{
		"ManagedCluster: taint effect not in the enum": {
			bad: `
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata: {name: mcl-taint-effect}
spec:
  taints: [{key: gpu.flotilla.io/maintenance, effect: NoSchedule}]`,
			wantErr: []string{`spec.taints[0].effect: Unsupported value: "NoSchedule"`, `"NoSelect", "PreferNoSelect", "NoSelectIfNew"`},
			good: `
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata: {name: mcl-taint-effect}
spec:
  taints: [{key: gpu.flotilla.io/maintenance, effect: NoSelect}]`,
		},
		"ManagedCluster: client config URL is not https": {
			bad: `
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata: {name: mcl-client-url}
spec:
  managedClusterClientConfigs: [{url: "http://api.gpu-east-1.example.com:6443"}]`,
			wantErr: []string{"spec.managedClusterClientConfigs[0].url", "must be an absolute https URL of the cluster's API server"},
			good: `
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata: {name: mcl-client-url}
spec:
  managedClusterClientConfigs: [{url: "https://api.gpu-east-1.example.com:6443"}]`,
		},
		"ManagedCluster: negative leaseDurationSeconds": {
			bad: `
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata: {name: mcl-lease}
spec: {hubAcceptsClient: false, leaseDurationSeconds: -60}`,
			wantErr: []string{"spec.leaseDurationSeconds", "should be greater than or equal to 0"},
			good: `
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata: {name: mcl-lease}
spec: {hubAcceptsClient: false, leaseDurationSeconds: 60}`,
		},
		"ManagedCluster: reserved name managed-clusters": reservedClusterName("managed-clusters"),
		"ManagedCluster: reserved name cluster":          reservedClusterName("cluster"),
		"ManagedCluster: reserved name addon":            reservedClusterName("addon"),
		"ClusterClaim: empty spec.value": {
			bad: `
apiVersion: cluster.open-cluster-management.io/v1alpha1
kind: ClusterClaim
metadata: {name: region.open-cluster-management.io}
spec: {value: ""}`,
			wantErr: []string{`spec.value: Invalid value: ""`, "should be at least 1 chars long"},
			good: `
apiVersion: cluster.open-cluster-management.io/v1alpha1
kind: ClusterClaim
metadata: {name: region.open-cluster-management.io}
spec: {value: us-east-1}`,
		},
		"ClusterClaim: spec.value longer than 1024 characters": {
			bad: `
apiVersion: cluster.open-cluster-management.io/v1alpha1
kind: ClusterClaim
metadata: {name: notes.flotilla.io}
spec: {value: ` + strings.Repeat("x", 1025) + `}`,
			wantErr: []string{"spec.value: Too long", "1024"},
			good: `
apiVersion: cluster.open-cluster-management.io/v1alpha1
kind: ClusterClaim
metadata: {name: notes.flotilla.io}
spec: {value: ` + strings.Repeat("x", 1024) + `}`,
		},
		// The bad object's status write is refused after the object itself was created, so the
		// good twin carries another name.
		"AddOnPlacementScore: score value above 100": {
			bad: `
apiVersion: cluster.open-cluster-management.io/v1alpha1
kind: AddOnPlacementScore
metadata: {name: gpu-score-too-high}
status:
  scores: [{name: gpuClusterAvailable, value: 150}]`,
			wantErr: []string{"status.scores[0].value", "should be less than or equal to 100"},
			good: `
apiVersion: cluster.open-cluster-management.io/v1alpha1
kind: AddOnPlacementScore
metadata: {name: gpu-score-high}
status:
  scores: [{name: gpuClusterAvailable, value: 100}]`,
		},
		"AddOnPlacementScore: score value below -100": {
			bad: `
apiVersion: cluster.open-cluster-management.io/v1alpha1
kind: AddOnPlacementScore
metadata: {name: gpu-score-too-low}
status:
  scores: [{name: gpuClusterAvailable, value: -101}]`,
			wantErr: []string{"status.scores[0].value", "should be greater than or equal to -100"},
			good: `
apiVersion: cluster.open-cluster-management.io/v1alpha1
kind: AddOnPlacementScore
metadata: {name: gpu-score-low}
status:
  scores: [{name: gpuClusterAvailable, value: -100}]`,
		},
	})
}

// reservedClusterName is a ManagedCluster named name, which is reserved
// (clusteridentity.ReservedClusterNames), and its twin named name + "s".
func reservedClusterName(name string) validationCase {
	obj := func(name string) string {
		return `
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata: {name: ` + name + `}
spec: {hubAcceptsClient: false}`
	}
	return validationCase{
		bad:     obj(name),
		wantErr: []string{"metadata.name managed-clusters, cluster and addon are reserved", "register the cluster under another name"},
		good:    obj(name + "s"),
	}
}
