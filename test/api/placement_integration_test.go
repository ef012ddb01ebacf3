//go:build integration

package api

import (
	"fmt"
	"strings"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
)

// placementYAML is a Placement named name with the given spec (YAML, indented two spaces).
func placementYAML(name, spec string) string {
	return fmt.Sprintf(`
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: %s}
spec:
%s`, name, spec)
}

// placementDecisionYAML is a PlacementDecision named name whose status holds decisions (a YAML
// sequence indented two spaces, as decisionsYAML writes).
func placementDecisionYAML(name, decisions string) string {
	return fmt.Sprintf(`
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: PlacementDecision
metadata:
  name: %s
  labels: {cluster.open-cluster-management.io/placement: gpu-training}
status:
  decisions:
%s`, name, decisions)
}

// decisionsYAML lists n decisions for clusters gpu-1 ... gpu-n.
func decisionsYAML(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  - {clusterName: gpu-%d, reason: \"\", score: %d}\n", i, 100-i)
	}
	return b.String()
}

// spreadYAML is a spread policy with n constraints on distinct topology keys.
func spreadYAML(n int) string {
	var b strings.Builder
	b.WriteString("  spreadPolicy:\n    spreadConstraints:\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "    - {topologyKey: topology.flotilla.io/level-%d, topologyKeyType: Label, maxSkew: 1}\n", i)
	}
	return b.String()
}

func init() {
	addToScheme = append(addToScheme, clusterv1beta1.AddToScheme)
	addValidationCases(map[string]validationCase{
		"Placement: prioritizer weight above 10": {
			bad: placementYAML("pl-weight-high", `
  prioritizerPolicy:
    configurations: [{scoreCoordinate: {type: BuiltIn, builtIn: Balance}, weight: 11}]`),
			wantErr: []string{"spec.prioritizerPolicy.configurations[0].weight", "should be less than or equal to 10"},
			good: placementYAML("pl-weight-high", `
  prioritizerPolicy:
    configurations: [{scoreCoordinate: {type: BuiltIn, builtIn: Balance}, weight: 10}]`),
		},
		"Placement: prioritizer weight below -10": {
			bad: placementYAML("pl-weight-low", `
  prioritizerPolicy:
    configurations: [{scoreCoordinate: {type: BuiltIn, builtIn: Steady}, weight: -11}]`),
			wantErr: []string{"spec.prioritizerPolicy.configurations[0].weight", "should be greater than or equal to -10"},
			good: placementYAML("pl-weight-low", `
  prioritizerPolicy:
    configurations: [{scoreCoordinate: {type: BuiltIn, builtIn: Steady}, weight: -10}]`),
		},
		"Placement: negative numberOfClusters": {
			bad:     placementYAML("pl-number", `  numberOfClusters: -1`),
			wantErr: []string{"spec.numberOfClusters", "should be greater than or equal to 0"},
			good:    placementYAML("pl-number", `  numberOfClusters: 0`),
		},
		"Placement: toleration operator not Equal or Exists": {
			bad: placementYAML("pl-tol-operator", `
  tolerations: [{key: gpu.flotilla.io/maintenance, operator: In, value: driver-upgrade}]`),
			wantErr: []string{"spec.tolerations[0].operator", "operator must be Equal (the taint's value equals value) or Exists"},
			good: placementYAML("pl-tol-operator", `
  tolerations: [{key: gpu.flotilla.io/maintenance, operator: Equal, value: driver-upgrade}]`),
		},
		"Placement: toleration effect not in the enum": {
			bad: placementYAML("pl-tol-effect", `
  tolerations: [{key: cluster.open-cluster-management.io/unreachable, operator: Exists, effect: NoSchedule}]`),
			wantErr: []string{`spec.tolerations[0].effect: Unsupported value: "NoSchedule"`, `"NoSelect", "PreferNoSelect", "NoSelectIfNew"`},
			good: placementYAML("pl-tol-effect", `
  tolerations: [{key: cluster.open-cluster-management.io/unreachable, operator: Exists, effect: NoSelect}]`),
		},
		"Placement: toleration with an empty key and operator Equal": {
			bad:     placementYAML("pl-tol-nokey", `  tolerations: [{effect: NoSelect}]`),
			wantErr: []string{"spec.tolerations[0].operator", "a toleration with an empty key matches every taint and needs operator Exists"},
			good:    placementYAML("pl-tol-nokey", `  tolerations: [{operator: Exists, effect: NoSelect}]`),
		},
		"Placement: toleration with operator Exists and a value": {
			bad: placementYAML("pl-tol-value", `
  tolerations: [{key: gpu.flotilla.io/maintenance, operator: Exists, value: driver-upgrade}]`),
			wantErr: []string{"spec.tolerations[0].value", "value must be empty when operator is Exists"},
			good: placementYAML("pl-tol-value", `
  tolerations: [{key: gpu.flotilla.io/maintenance, operator: Exists}]`),
		},
		"Placement: negative tolerationSeconds": {
			bad: placementYAML("pl-tol-seconds", `
  tolerations: [{key: cluster.open-cluster-management.io/unreachable, operator: Exists, tolerationSeconds: -5}]`),
			wantErr: []string{"spec.tolerations[0].tolerationSeconds", "should be greater than or equal to 0"},
			good: placementYAML("pl-tol-seconds", `
  tolerations: [{key: cluster.open-cluster-management.io/unreachable, operator: Exists, tolerationSeconds: 300}]`),
		},
		"Placement: more than 8 spread constraints": {
			bad:     placementYAML("pl-spread-many", spreadYAML(9)),
			wantErr: []string{"spec.spreadPolicy.spreadConstraints", "must have at most 8 items"},
			good:    placementYAML("pl-spread-many", spreadYAML(8)),
		},
		"Placement: spread maxSkew below 1": {
			bad: placementYAML("pl-spread-skew", `
  spreadPolicy: {spreadConstraints: [{topologyKey: topology.kubernetes.io/region, topologyKeyType: Label, maxSkew: 0}]}`),
			wantErr: []string{"spec.spreadPolicy.spreadConstraints[0].maxSkew", "should be greater than or equal to 1"},
			good: placementYAML("pl-spread-skew", `
  spreadPolicy: {spreadConstraints: [{topologyKey: topology.kubernetes.io/region, topologyKeyType: Label, maxSkew: 1}]}`),
		},
		"Placement: topologyKeyType not in the enum": {
			bad: placementYAML("pl-spread-keytype", `
  spreadPolicy: {spreadConstraints: [{topologyKey: region, topologyKeyType: Annotation}]}`),
			wantErr: []string{`spec.spreadPolicy.spreadConstraints[0].topologyKeyType: Unsupported value: "Annotation"`, `"Label", "Claim"`},
			good: placementYAML("pl-spread-keytype", `
  spreadPolicy: {spreadConstraints: [{topologyKey: region, topologyKeyType: Claim}]}`),
		},
		"Placement: whenUnsatisfiable not in the enum": {
			bad: placementYAML("pl-spread-when", `
  spreadPolicy: {spreadConstraints: [{topologyKey: region, topologyKeyType: Label, whenUnsatisfiable: Ignore}]}`),
			wantErr: []string{`spec.spreadPolicy.spreadConstraints[0].whenUnsatisfiable: Unsupported value: "Ignore"`, `"DoNotSchedule", "ScheduleAnyway"`},
			good: placementYAML("pl-spread-when", `
  spreadPolicy: {spreadConstraints: [{topologyKey: region, topologyKeyType: Label, whenUnsatisfiable: DoNotSchedule}]}`),
		},
		"Placement: AddOn score coordinate without addOn": {
			bad: placementYAML("pl-score-addon", `
  prioritizerPolicy:
    configurations: [{scoreCoordinate: {type: AddOn}, weight: 3}]`),
			wantErr: []string{"spec.prioritizerPolicy.configurations[0].scoreCoordinate.addOn", "scoreCoordinate type AddOn needs addOn"},
			good: placementYAML("pl-score-addon", `
  prioritizerPolicy:
    configurations: [{scoreCoordinate: {type: AddOn, addOn: {resourceName: resource-usage-score, scoreName: gpuClusterAvailable}}, weight: 3}]`),
		},
		"Placement: BuiltIn score coordinate without builtIn": {
			bad: placementYAML("pl-score-builtin", `
  prioritizerPolicy:
    configurations: [{scoreCoordinate: {addOn: {resourceName: resource-usage-score, scoreName: gpuClusterAvailable}}}]`),
			wantErr: []string{"spec.prioritizerPolicy.configurations[0].scoreCoordinate.builtIn", "scoreCoordinate type BuiltIn needs builtIn"},
			good: placementYAML("pl-score-builtin", `
  prioritizerPolicy:
    configurations: [{scoreCoordinate: {builtIn: ResourceAllocatableCPU}}]`),
		},
		"Placement: score coordinate type not in the enum": {
			bad: placementYAML("pl-score-type", `
  prioritizerPolicy:
    configurations: [{scoreCoordinate: {type: Plugin, builtIn: Balance}}]`),
			wantErr: []string{`spec.prioritizerPolicy.configurations[0].scoreCoordinate.type: Unsupported value: "Plugin"`, `"BuiltIn", "AddOn"`},
			good: placementYAML("pl-score-type", `
  prioritizerPolicy:
    configurations: [{scoreCoordinate: {type: BuiltIn, builtIn: Balance}}]`),
		},
		"Placement: prioritizer mode not Additive or Exact": {
			bad:     placementYAML("pl-mode", `  prioritizerPolicy: {mode: Strict}`),
			wantErr: []string{"spec.prioritizerPolicy.mode", "mode must be Additive or Exact"},
			good:    placementYAML("pl-mode", `  prioritizerPolicy: {mode: Exact}`),
		},
		"Placement: addOn score without scoreName": {
			bad: placementYAML("pl-addon-name", `
  prioritizerPolicy:
    configurations: [{scoreCoordinate: {type: AddOn, addOn: {resourceName: resource-usage-score}}}]`),
			wantErr: []string{"spec.prioritizerPolicy.configurations[0].scoreCoordinate.addOn.scoreName", "Required value"},
			good: placementYAML("pl-addon-name", `
  prioritizerPolicy:
    configurations: [{scoreCoordinate: {type: AddOn, addOn: {resourceName: resource-usage-score, scoreName: gpuNodeAvailable}}}]`),
		},
		// clusteradm create placement sends 0, which OCM takes as one group: accepted.
		"Placement: clustersPerDecisionGroup negative": {
			bad:     placementYAML("pl-group-zero", `  decisionStrategy: {groupStrategy: {clustersPerDecisionGroup: -1}}`),
			wantErr: []string{"spec.decisionStrategy.groupStrategy.clustersPerDecisionGroup", "clustersPerDecisionGroup may not be negative"},
			good:    placementYAML("pl-group-zero", `  decisionStrategy: {groupStrategy: {clustersPerDecisionGroup: 0}}`),
		},
		"Placement: clustersPerDecisionGroup above 100%": {
			bad:     placementYAML("pl-group-percent", `  decisionStrategy: {groupStrategy: {clustersPerDecisionGroup: "150%"}}`),
			wantErr: []string{"spec.decisionStrategy.groupStrategy.clustersPerDecisionGroup", "should match"},
			good:    placementYAML("pl-group-percent", `  decisionStrategy: {groupStrategy: {clustersPerDecisionGroup: "25%"}}`),
		},
		"Placement: decision group name not a label value": {
			bad: placementYAML("pl-group-name", `
  decisionStrategy:
    groupStrategy:
      decisionGroups: [{groupName: "canary wave", groupClusterSelector: {labelSelector: {matchLabels: {stage: canary}}}}]`),
			wantErr: []string{"spec.decisionStrategy.groupStrategy.decisionGroups[0].groupName", "should match"},
			good: placementYAML("pl-group-name", `
  decisionStrategy:
    groupStrategy:
      decisionGroups: [{groupName: canary-wave, groupClusterSelector: {labelSelector: {matchLabels: {stage: canary}}}}]`),
		},
		"Placement: sortBy not in the enum": {
			bad:     placementYAML("pl-sortby", `  sortBy: Random`),
			wantErr: []string{`spec.sortBy: Unsupported value: "Random"`, `"ClusterName", "Score"`},
			good:    placementYAML("pl-sortby", `  sortBy: Score`),
		},
		"Placement: scoreRateLimit not a duration": {
			bad:     placementYAML("pl-ratelimit", `  scoreRateLimit: 1 minute`),
			wantErr: []string{"spec.scoreRateLimit", "should match"},
			good:    placementYAML("pl-ratelimit", `  scoreRateLimit: 90s`),
		},
		"Placement: empty CEL expression": {
			bad: placementYAML("pl-cel-empty", `
  predicates: [{requiredClusterSelector: {celSelector: {celExpressions: [""]}}}]`),
			wantErr: []string{"spec.predicates[0].requiredClusterSelector.celSelector.celExpressions[0]", "should be at least 1 chars long"},
			good: placementYAML("pl-cel-empty", `
  predicates: [{requiredClusterSelector: {celSelector: {celExpressions: ['managedCluster.metadata.labels["accelerator"] == "nvidia-h100"']}}}]`),
		},
		// Status is written through the status subresource after the object is created, so a bad
		// status leaves the object behind: bad and good twins of these cases have distinct names.
		"PlacementDecision: more than 100 decisions": {
			bad:     placementDecisionYAML("gpu-training-decision-101", decisionsYAML(101)),
			wantErr: []string{"status.decisions", "must have at most 100 items"},
			good:    placementDecisionYAML("gpu-training-decision-100", decisionsYAML(100)),
		},
		"PlacementDecision: a cluster decided twice": {
			bad: placementDecisionYAML("gpu-training-decision-dup", `
  - {clusterName: gpu-east-1, reason: ""}
  - {clusterName: gpu-east-1, reason: ""}`),
			wantErr: []string{"status.decisions", "decisions must not name a cluster twice"},
			good: placementDecisionYAML("gpu-training-decision-nodup", `
  - {clusterName: gpu-east-1, reason: ""}
  - {clusterName: gpu-west-2, reason: ""}
  - {clusterName: "", reason: ""}
  - {clusterName: "", reason: ""}`),
		},
		"PlacementDecision: decision without clusterName": {
			bad: placementDecisionYAML("gpu-training-decision-noname", `
  - {reason: "matched predicate 1"}`),
			wantErr: []string{"status.decisions[0].clusterName", "Required value"},
			good: placementDecisionYAML("gpu-training-decision-named", `
  - {clusterName: gpu-east-1, reason: "matched predicate 1"}`),
		},
	})
}
