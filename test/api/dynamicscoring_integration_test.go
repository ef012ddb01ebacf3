//go:build integration

package api

import dynamicscoringv1alpha1 "github.com/flotilla/flotilla/api/dynamicscoring/v1alpha1"

func init() {
	addToScheme = append(addToScheme, dynamicscoringv1alpha1.AddToScheme)
	addValidationCases(map[string]validationCase{
		"DynamicScorer: Prometheus source without host and query": {
			bad: `
apiVersion: dynamic-scoring.open-cluster-management.io/v1alpha1
kind: DynamicScorer
metadata: {name: gpu-load}
spec:
  description: GPU load
  configURL: http://scorer.scoring.svc:8080/config
  configSyncMode: None
  source: {type: Prometheus, path: /api/v1/query_range, params: {query: "", range: 3600, step: 60}}`,
			wantErr: []string{"spec.source", "source.type Prometheus needs spec.source.host and spec.source.params.query"},
			good: `
apiVersion: dynamic-scoring.open-cluster-management.io/v1alpha1
kind: DynamicScorer
metadata: {name: gpu-load}
spec:
  description: GPU load
  configURL: http://scorer.scoring.svc:8080/config
  configSyncMode: None
  source:
    type: Prometheus
    host: http://prometheus.monitoring.svc:9090
    path: /api/v1/query_range
    params: {query: DCGM_FI_DEV_GPU_UTIL, range: 3600, step: 60}`,
		},
		"DynamicScorer: source type not in the enum": {
			bad: `
apiVersion: dynamic-scoring.open-cluster-management.io/v1alpha1
kind: DynamicScorer
metadata: {name: bad-source}
spec: {description: d, configURL: http://scorer/config, configSyncMode: None, source: {type: Datadog}}`,
			wantErr: []string{`spec.source.type: Unsupported value: "Datadog"`, `"Prometheus", "None"`},
			good: `
apiVersion: dynamic-scoring.open-cluster-management.io/v1alpha1
kind: DynamicScorer
metadata: {name: bad-source}
spec: {description: d, configURL: http://scorer/config, configSyncMode: None, source: {type: None}}`,
		},
		"DynamicScorer: scoreDestination not in the enum": {
			bad: `
apiVersion: dynamic-scoring.open-cluster-management.io/v1alpha1
kind: DynamicScorer
metadata: {name: bad-destination}
spec: {description: d, configURL: http://scorer/config, configSyncMode: None, scoreDestination: ConfigMap}`,
			wantErr: []string{`spec.scoreDestination: Unsupported value: "ConfigMap"`, `"AddOnPlacementScore", "None"`},
			good: `
apiVersion: dynamic-scoring.open-cluster-management.io/v1alpha1
kind: DynamicScorer
metadata: {name: bad-destination}
spec: {description: d, configURL: http://scorer/config, configSyncMode: None, scoreDestination: AddOnPlacementScore}`,
		},
		"DynamicScorer: Full config sync without a config URL": {
			bad: `
apiVersion: dynamic-scoring.open-cluster-management.io/v1alpha1
kind: DynamicScorer
metadata: {name: synced}
spec: {description: d, configURL: "", configSyncMode: Full}`,
			wantErr: []string{"spec.configURL", "configSyncMode Full needs spec.configURL"},
			good: `
apiVersion: dynamic-scoring.open-cluster-management.io/v1alpha1
kind: DynamicScorer
metadata: {name: synced}
spec: {description: d, configURL: http://scorer.scoring.svc:8080/config, configSyncMode: Full}`,
		},
	})
}
