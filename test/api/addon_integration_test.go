//go:build integration

package api

import addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"

func init() {
	addToScheme = append(addToScheme, addonv1alpha1.AddToScheme)
	addValidationCases(map[string]validationCase{
		"ClusterManagementAddOn: placements with install strategy Manual": {
			bad: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ClusterManagementAddOn
metadata: {name: cma-manual-placements}
spec:
  installStrategy:
    type: Manual
    placements: [{namespace: gpu-fleet, name: gpu-training}]`,
			wantErr: []string{"spec.installStrategy", "spec.installStrategy.placements is only used when spec.installStrategy.type is Placements"},
			good: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ClusterManagementAddOn
metadata: {name: cma-manual-placements}
spec:
  installStrategy:
    type: Placements
    placements: [{namespace: gpu-fleet, name: gpu-training}]`,
		},
		"ClusterManagementAddOn: progressive rollout settings without type Progressive": {
			bad: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ClusterManagementAddOn
metadata: {name: cma-rollout-type}
spec:
  installStrategy:
    type: Placements
    placements:
    - namespace: gpu-fleet
      name: gpu-training
      rolloutStrategy: {progressive: {maxConcurrency: 25%}}`,
			wantErr: []string{"spec.installStrategy.placements[0].rolloutStrategy", "rolloutStrategy.progressive is only used when rolloutStrategy.type is Progressive"},
			good: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ClusterManagementAddOn
metadata: {name: cma-rollout-type}
spec:
  installStrategy:
    type: Placements
    placements:
    - namespace: gpu-fleet
      name: gpu-training
      rolloutStrategy: {type: Progressive, progressive: {maxConcurrency: 25%}}`,
		},
		// Status is written through the status subresource after the object is created, so the
		// refused bad object stays behind: the twins of status cases have different names.
		"ManagedClusterAddOn: health check mode not in the enum": {
			bad: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ManagedClusterAddOn
metadata: {name: mca-health-bad}
spec: {}
status: {healthCheck: {mode: Probe}}`,
			wantErr: []string{`status.healthCheck.mode: Unsupported value: "Probe"`, `"Lease", "Customized"`},
			good: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ManagedClusterAddOn
metadata: {name: mca-health-good}
spec: {}
status: {healthCheck: {mode: Customized}}`,
		},
		"ManagedClusterAddOn: two registrations with the same signer": {
			bad: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ManagedClusterAddOn
metadata: {name: mca-signers-bad}
spec: {}
status:
  registrations:
  - signerName: kubernetes.io/kube-apiserver-client
  - signerName: kubernetes.io/kube-apiserver-client
    subject: {user: resource-usage-collect-agent}`,
			wantErr: []string{"status.registrations", "status.registrations lists a signerName twice"},
			good: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: ManagedClusterAddOn
metadata: {name: mca-signers-good}
spec: {}
status:
  registrations:
  - signerName: kubernetes.io/kube-apiserver-client
  - signerName: flotilla.io/gpu-metrics
    subject: {user: resource-usage-collect-agent}`,
		},
		"AddOnTemplate: CustomSigner registration without customSigner": {
			bad: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnTemplate
metadata: {name: tpl-custom-signer}
spec:
  addonName: resource-usage-collect
  agentSpec: {}
  registration: [{type: CustomSigner}]`,
			wantErr: []string{"spec.registration[0]", "spec.registration[].customSigner is required when type is CustomSigner"},
			good: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnTemplate
metadata: {name: tpl-custom-signer}
spec:
  addonName: resource-usage-collect
  agentSpec: {}
  registration:
  - type: CustomSigner
    customSigner: {signerName: flotilla.io/gpu-metrics, signingCA: {name: gpu-metrics-signer}}`,
		},
		"AddOnDeploymentConfig: caBundle without an HTTPS proxy": {
			bad: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnDeploymentConfig
metadata: {name: adc-proxy-ca}
spec:
  proxyConfig: {httpProxy: "http://proxy.ml.example.com:3128", caBundle: "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="}`,
			wantErr: []string{"spec.proxyConfig", "spec.proxyConfig.caBundle verifies the HTTPS proxy, but spec.proxyConfig.httpsProxy is not set"},
			good: `
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnDeploymentConfig
metadata: {name: adc-proxy-ca}
spec:
  proxyConfig: {httpsProxy: "https://proxy.ml.example.com:3129", caBundle: "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="}`,
		},
	})
}
