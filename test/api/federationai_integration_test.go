//go:build integration

package api

import (
	"fmt"

	federationaiv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
)

// federatedLearningYAML is a FederatedLearning named name with the given spec (YAML, indented two
// spaces) and, when not empty, status (likewise).
func federatedLearningYAML(name, spec, status string) string {
	doc := fmt.Sprintf(`
apiVersion: federation-ai.open-cluster-management.io/v1alpha1
kind: FederatedLearning
metadata: {name: %s}
spec:
%s`, name, spec)
	if status != "" {
		doc += "\nstatus:\n" + status
	}
	return doc
}

func init() {
	addToScheme = append(addToScheme, federationaiv1alpha1.AddToScheme)
	addValidationCases(map[string]validationCase{
		"FederatedLearning: minAvailableClients below 1": {
			bad:     federatedLearningYAML("fl-min-clients", `  server: {rounds: 3, minAvailableClients: 0}`, ""),
			wantErr: []string{"spec.server.minAvailableClients", "should be greater than or equal to 1"},
			good:    federatedLearningYAML("fl-min-clients", `  server: {rounds: 3, minAvailableClients: 1}`, ""),
		},
		"FederatedLearning: rounds below 1": {
			bad:     federatedLearningYAML("fl-rounds", `  server: {rounds: 0, minAvailableClients: 2}`, ""),
			wantErr: []string{"spec.server.rounds", "should be greater than or equal to 1"},
			good:    federatedLearningYAML("fl-rounds", `  server: {rounds: 1, minAvailableClients: 2}`, ""),
		},
		"FederatedLearning: framework not flower, openfl or other": {
			bad:     federatedLearningYAML("fl-framework", `  framework: fedml`, ""),
			wantErr: []string{"spec.framework", "framework must be flower, openfl or other"},
			good:    federatedLearningYAML("fl-framework", `  framework: openfl`, ""),
		},
		"FederatedLearning: listener type not LoadBalancer, NodePort or Route": {
			bad: federatedLearningYAML("fl-listener-type", `
  server: {listeners: [{name: server-listener, port: 8080, type: ClusterIP}]}`, ""),
			wantErr: []string{"spec.server.listeners[0].type", "listener type must be LoadBalancer, NodePort or Route"},
			good: federatedLearningYAML("fl-listener-type", `
  server: {listeners: [{name: server-listener, port: 8080, type: Route}]}`, ""),
		},
		"FederatedLearning: listener port above 65535": {
			bad: federatedLearningYAML("fl-listener-port", `
  server: {listeners: [{name: server-listener, port: 80800, type: LoadBalancer}]}`, ""),
			wantErr: []string{"spec.server.listeners[0].port", "should be less than or equal to 65535"},
			good: federatedLearningYAML("fl-listener-port", `
  server: {listeners: [{name: server-listener, port: 8080, type: LoadBalancer}]}`, ""),
		},
		"FederatedLearning: two listeners with one name": {
			bad: federatedLearningYAML("fl-listener-names", `
  server:
    listeners:
    - {name: server-listener, port: 8080, type: LoadBalancer}
    - {name: server-listener, port: 30080, type: NodePort}`, ""),
			wantErr: []string{"spec.server.listeners", "listeners must have unique names"},
			good: federatedLearningYAML("fl-listener-names", `
  server:
    listeners:
    - {name: server-listener, port: 8080, type: LoadBalancer}
    - {name: server-nodeport, port: 30080, type: NodePort}`, ""),
		},
		"FederatedLearning: ip on a LoadBalancer listener": {
			bad: federatedLearningYAML("fl-listener-ip-type", `
  server: {listeners: [{name: server-listener, port: 8080, type: LoadBalancer, ip: 192.0.2.10}]}`, ""),
			wantErr: []string{"spec.server.listeners[0].ip", "ip applies only to listeners of type NodePort"},
			good: federatedLearningYAML("fl-listener-ip-type", `
  server: {listeners: [{name: server-listener, port: 30080, type: NodePort, ip: 192.0.2.10}]}`, ""),
		},
		"FederatedLearning: listener ip not an IP address": {
			bad: federatedLearningYAML("fl-listener-ip", `
  server: {listeners: [{name: server-listener, port: 30080, type: NodePort, ip: node-1.example.com}]}`, ""),
			wantErr: []string{"spec.server.listeners[0].ip", "ip must be an IPv4 or IPv6 address"},
			good: federatedLearningYAML("fl-listener-ip", `
  server: {listeners: [{name: server-listener, port: 30080, type: NodePort, ip: "2001:db8::10"}]}`, ""),
		},
		"FederatedLearning: storage type not PersistentVolumeClaim, HostPath or S3Bucket": {
			bad:     federatedLearningYAML("fl-storage-type", `  server: {storage: {type: NFS, path: /exports/models}}`, ""),
			wantErr: []string{"spec.server.storage.type", "storage type must be PersistentVolumeClaim, HostPath or S3Bucket"},
			good:    federatedLearningYAML("fl-storage-type", `  server: {storage: {type: HostPath, path: /exports/models}}`, ""),
		},
		"FederatedLearning: S3Bucket storage without s3": {
			bad:     federatedLearningYAML("fl-storage-s3", `  server: {storage: {type: S3Bucket}}`, ""),
			wantErr: []string{"spec.server.storage.s3", "storage type S3Bucket needs s3"},
			good:    federatedLearningYAML("fl-storage-s3", `  server: {storage: {type: S3Bucket, s3: {bucketName: flotilla-fl-models}}}`, ""),
		},
		"FederatedLearning: PersistentVolumeClaim storage without name": {
			bad:     federatedLearningYAML("fl-storage-pvc", `  server: {storage: {type: PersistentVolumeClaim, path: /data/models, size: 2Gi}}`, ""),
			wantErr: []string{"spec.server.storage.name", "storage type PersistentVolumeClaim needs name"},
			good:    federatedLearningYAML("fl-storage-pvc", `  server: {storage: {type: PersistentVolumeClaim, name: model-pvc, path: /data/models, size: 2Gi}}`, ""),
		},
		"FederatedLearning: storage size not a quantity": {
			bad:     federatedLearningYAML("fl-storage-size", `  server: {storage: {type: PersistentVolumeClaim, name: model-pvc, size: 2 gigabytes}}`, ""),
			wantErr: []string{"spec.server.storage.size", "size must be a quantity such as 2Gi"},
			good:    federatedLearningYAML("fl-storage-size", `  server: {storage: {type: PersistentVolumeClaim, name: model-pvc, size: 2Gi}}`, ""),
		},
		"FederatedLearning: superlink not service.namespace:port": {
			bad:     federatedLearningYAML("fl-superlink", `  server: {superlink: "https://superlink.flower-system"}`, ""),
			wantErr: []string{"spec.server.superlink", "should match"},
			good:    federatedLearningYAML("fl-superlink", `  server: {superlink: "superlink.flower-system:9091"}`, ""),
		},
		"FederatedLearning: superlinkInsecure with flower-addon's SuperLink": {
			bad:     federatedLearningYAML("fl-superlink-insecure", `  server: {superlink: "superlink.flower-system.svc:9091", superlinkInsecure: true}`, ""),
			wantErr: []string{"spec.server.superlinkInsecure", "superlinkInsecure applies only to a SuperLink other than flower-addon's"},
			good:    federatedLearningYAML("fl-superlink-insecure", `  server: {superlink: "superlink.ml-team:9091", superlinkInsecure: true}`, ""),
		},
		"FederatedLearning: minAvailableClients above the clients placed": {
			bad: federatedLearningYAML("fl-min-vs-placed", `
  server: {rounds: 3, minAvailableClients: 5}
  client: {placement: {numberOfClusters: 4}}`, ""),
			wantErr: []string{"spec.server.minAvailableClients", "server.minAvailableClients is more than client.placement.numberOfClusters"},
			good: federatedLearningYAML("fl-min-vs-placed", `
  server: {rounds: 3, minAvailableClients: 4}
  client: {placement: {numberOfClusters: 4}}`, ""),
		},
		"FederatedLearning: client placement toleration operator not Equal or Exists": {
			bad: federatedLearningYAML("fl-placement-tol", `
  client: {placement: {tolerations: [{key: cluster.open-cluster-management.io/unreachable, operator: Any}]}}`, ""),
			wantErr: []string{"spec.client.placement.tolerations[0].operator", "operator must be Equal (the taint's value equals value) or Exists"},
			good: federatedLearningYAML("fl-placement-tol", `
  client: {placement: {tolerations: [{key: cluster.open-cluster-management.io/unreachable, operator: Exists}]}}`, ""),
		},
		"FederatedLearning: client placement prioritizer weight above 10": {
			bad: federatedLearningYAML("fl-placement-weight", `
  client:
    placement:
      prioritizerPolicy:
        configurations: [{scoreCoordinate: {type: AddOn, addOn: {resourceName: resource-usage-score, scoreName: gpuNodeAvailable}}, weight: 20}]`, ""),
			wantErr: []string{"spec.client.placement.prioritizerPolicy.configurations[0].weight", "should be less than or equal to 10"},
			good: federatedLearningYAML("fl-placement-weight", `
  client:
    placement:
      prioritizerPolicy:
        configurations: [{scoreCoordinate: {type: AddOn, addOn: {resourceName: resource-usage-score, scoreName: gpuNodeAvailable}}, weight: 2}]`, ""),
		},
		// A bad status leaves the created object behind, so the twins have distinct names.
		"FederatedLearning: status phase not in the enum": {
			bad:     federatedLearningYAML("fl-phase-bad", `  framework: flower`, `  phase: Paused`),
			wantErr: []string{`status.phase: Unsupported value: "Paused"`, `"Waiting", "Running", "Completed", "Failed", "Start"`},
			good:    federatedLearningYAML("fl-phase-good", `  framework: flower`, `  phase: Completed`),
		},
		"FederatedLearning: flowerRunID not a run ID": {
			bad:     federatedLearningYAML("fl-run-id-bad", `  framework: flower`, `  flowerRunID: "run-7"`),
			wantErr: []string{"status.flowerRunID", "should match"},
			good:    federatedLearningYAML("fl-run-id-good", `  framework: flower`, `  flowerRunID: "18446744073709551615"`),
		},
	})
}
