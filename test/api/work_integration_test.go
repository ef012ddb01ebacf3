//go:build integration

package api

import (
	"strings"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla/flotilla/api/work/v1alpha1"
)

// mw is the head of a ManifestWork whose workload is a namespace and a GPU training Job; cases
// append their spec fields (indented two spaces under spec).
const mw = `
apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata: {name: train}
spec:
  workload:
    manifests:
    - {apiVersion: v1, kind: Namespace, metadata: {name: training}}
    - apiVersion: batch/v1
      kind: Job
      metadata: {name: train, namespace: training}
      spec:
        template:
          spec:
            restartPolicy: Never
            containers: [{name: trainer, image: trainer:1, resources: {limits: {nvidia.com/gpu: 1}}}]
`

// mwrs is the head of a ManifestWorkReplicaSet; cases append its spec fields.
const mwrs = `
apiVersion: work.open-cluster-management.io/v1alpha1
kind: ManifestWorkReplicaSet
metadata: {name: train}
spec:
`

func init() {
	addToScheme = append(addToScheme, workv1.AddToScheme, workv1alpha1.AddToScheme)
	addValidationCases(map[string]validationCase{
		"ManifestWork: two manifestConfigs for the same object": {
			bad: mw + `
  manifestConfigs:
  - resourceIdentifier: {group: batch, resource: jobs, name: train, namespace: training}
    feedbackRules: [{type: WellKnownStatus}]
  - resourceIdentifier: {group: batch, resource: jobs, name: train, namespace: training}
    updateStrategy: {type: CreateOnly}`,
			wantErr: []string{"spec.manifestConfigs", "manifestConfigs has two entries with the same resourceIdentifier"},
			good: mw + `
  manifestConfigs:
  - resourceIdentifier: {group: batch, resource: jobs, name: train, namespace: training}
    feedbackRules: [{type: WellKnownStatus}]
    updateStrategy: {type: CreateOnly}`,
		},
		"ManifestWork: two manifestConfigs for the same core object, one with an empty group": {
			bad: mw + `
  manifestConfigs:
  - resourceIdentifier: {resource: namespaces, name: training}
    updateStrategy: {type: CreateOnly}
  - resourceIdentifier: {group: "", resource: namespaces, name: training, namespace: ""}
    feedbackRules: [{type: WellKnownStatus}]`,
			wantErr: []string{"spec.manifestConfigs", "manifestConfigs has two entries with the same resourceIdentifier"},
			good: mw + `
  manifestConfigs:
  - resourceIdentifier: {resource: namespaces, name: training}
    updateStrategy: {type: CreateOnly}
  - resourceIdentifier: {group: batch, resource: jobs, name: train, namespace: training}
    feedbackRules: [{type: WellKnownStatus}]`,
		},
		"ManifestWork: update strategy type not in the enum": {
			bad: mw + `
  manifestConfigs:
  - resourceIdentifier: {group: batch, resource: jobs, name: train, namespace: training}
    updateStrategy: {type: Replace}`,
			wantErr: []string{`spec.manifestConfigs[0].updateStrategy.type: Unsupported value: "Replace"`, `"Update", "CreateOnly", "ServerSideApply", "ReadOnly"`},
			good: mw + `
  manifestConfigs:
  - resourceIdentifier: {group: batch, resource: jobs, name: train, namespace: training}
    updateStrategy: {type: ReadOnly}`,
		},
		"ManifestWork: serverSideApply with update strategy Update": {
			bad: mw + `
  manifestConfigs:
  - resourceIdentifier: {group: batch, resource: jobs, name: train, namespace: training}
    updateStrategy: {type: Update, serverSideApply: {force: true}}`,
			wantErr: []string{"spec.manifestConfigs[0].updateStrategy", "updateStrategy.serverSideApply is only used with type ServerSideApply"},
			good: mw + `
  manifestConfigs:
  - resourceIdentifier: {group: batch, resource: jobs, name: train, namespace: training}
    updateStrategy: {type: ServerSideApply, serverSideApply: {force: true}}`,
		},
		"ManifestWork: JSONPaths feedback rule without jsonPaths": {
			bad: mw + `
  manifestConfigs:
  - resourceIdentifier: {group: batch, resource: jobs, name: train, namespace: training}
    feedbackRules: [{type: JSONPaths}]`,
			wantErr: []string{"spec.manifestConfigs[0].feedbackRules[0]", "feedbackRules of type JSONPaths need jsonPaths"},
			good: mw + `
  manifestConfigs:
  - resourceIdentifier: {group: batch, resource: jobs, name: train, namespace: training}
    feedbackRules: [{type: JSONPaths, jsonPaths: [{name: succeeded, path: .succeeded}]}]`,
		},
		"ManifestWork: feedback rule type not in the enum": {
			bad: mw + `
  manifestConfigs:
  - resourceIdentifier: {group: batch, resource: jobs, name: train, namespace: training}
    feedbackRules: [{type: AllStatus}]`,
			wantErr: []string{`spec.manifestConfigs[0].feedbackRules[0].type: Unsupported value: "AllStatus"`, `"WellKnownStatus", "JSONPaths"`},
			good: mw + `
  manifestConfigs:
  - resourceIdentifier: {group: batch, resource: jobs, name: train, namespace: training}
    feedbackRules: [{type: WellKnownStatus}]`,
		},
		"ManifestWork: CEL condition rule without expressions": {
			bad: mw + `
  manifestConfigs:
  - resourceIdentifier: {group: batch, resource: jobs, name: train, namespace: training}
    conditionRules: [{condition: Complete, type: CEL}]`,
			wantErr: []string{"spec.manifestConfigs[0].conditionRules[0]", "conditionRules of type CEL need celExpressions"},
			good: mw + `
  manifestConfigs:
  - resourceIdentifier: {group: batch, resource: jobs, name: train, namespace: training}
    conditionRules: [{condition: Complete, type: CEL, celExpressions: ["object.status.succeeded >= 1"]}]`,
		},
		"ManifestWork: selectivelyOrphans with propagation policy Orphan": {
			bad: mw + `
  deleteOption:
    propagationPolicy: Orphan
    selectivelyOrphans: {orphaningRules: [{resource: namespaces, name: training}]}`,
			wantErr: []string{"spec.deleteOption", "deleteOption.selectivelyOrphans is only used with propagationPolicy SelectivelyOrphan"},
			good: mw + `
  deleteOption:
    propagationPolicy: SelectivelyOrphan
    selectivelyOrphans: {orphaningRules: [{resource: namespaces, name: training}]}`,
		},
		"ManifestWork: propagation policy not in the enum": {
			bad: mw + `
  deleteOption: {propagationPolicy: Background}`,
			wantErr: []string{`spec.deleteOption.propagationPolicy: Unsupported value: "Background"`, `"Foreground", "Orphan", "SelectivelyOrphan"`},
			good: mw + `
  deleteOption: {propagationPolicy: Orphan}`,
		},
		"ManifestWork: ServiceAccount executor without serviceAccount": {
			bad: mw + `
  executor: {subject: {type: ServiceAccount}}`,
			wantErr: []string{"spec.executor.subject", "executor.subject of type ServiceAccount needs serviceAccount"},
			good: mw + `
  executor: {subject: {type: ServiceAccount, serviceAccount: {namespace: flotilla-work, name: deployer}}}`,
		},
		"ManifestWork: manifest without a kind": {
			bad: `
apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata: {name: train}
spec:
  workload:
    manifests:
    - {apiVersion: v1, metadata: {name: training}}`,
			wantErr: []string{"spec.workload.manifests[0].kind", "Required value"},
			good: `
apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata: {name: train}
spec:
  workload:
    manifests:
    - {apiVersion: v1, kind: Namespace, metadata: {name: training}}`,
		},
		"ManifestWork: Integer status feedback without an integer": {
			// The bad object is created before its status is refused, so it is named apart.
			bad: strings.Replace(mw, "{name: train}", "{name: train-bad-status}", 1) + `
status:
  resourceStatus:
    manifests:
    - resourceMeta: {ordinal: 1, group: batch, version: v1, kind: Job, resource: jobs, name: train, namespace: training}
      statusFeedback: {values: [{name: succeeded, fieldValue: {type: Integer, string: "1"}}]}
      conditions: []`,
			wantErr: []string{"status.resourceStatus.manifests[0].statusFeedback.values[0].fieldValue", "fieldValue must hold the field its type names"},
			good: mw + `
status:
  resourceStatus:
    manifests:
    - resourceMeta: {ordinal: 1, group: batch, version: v1, kind: Job, resource: jobs, name: train, namespace: training}
      statusFeedback: {values: [{name: succeeded, fieldValue: {type: Integer, integer: 1}}]}
      conditions: []`,
		},
		"AppliedManifestWork: name is not <hubHash>-<manifestWorkName>": {
			bad: `
apiVersion: work.open-cluster-management.io/v1
kind: AppliedManifestWork
metadata: {name: train}
spec: {hubHash: 0f3a9c, manifestWorkName: train}`,
			wantErr: []string{"metadata.name must be spec.hubHash-spec.manifestWorkName"},
			good: `
apiVersion: work.open-cluster-management.io/v1
kind: AppliedManifestWork
metadata: {name: 0f3a9c-train}
spec: {hubHash: 0f3a9c, manifestWorkName: train}`,
		},
		"ManifestWorkReplicaSet: two manifestConfigs for the same object in the template": {
			bad: mwrs + `
  placementRefs: [{name: gpu}]
  manifestWorkTemplate:
    manifestConfigs:
    - resourceIdentifier: {group: batch, resource: jobs, name: train, namespace: training}
    - resourceIdentifier: {group: batch, resource: jobs, name: train, namespace: training}`,
			wantErr: []string{"spec.manifestWorkTemplate.manifestConfigs", "manifestConfigs has two entries with the same resourceIdentifier"},
			good: mwrs + `
  placementRefs: [{name: gpu}]
  manifestWorkTemplate:
    manifestConfigs:
    - resourceIdentifier: {group: batch, resource: jobs, name: train, namespace: training}
    - resourceIdentifier: {group: batch, resource: jobs, name: evaluate, namespace: training}`,
		},
		"ManifestWorkReplicaSet: no placementRefs": {
			bad: mwrs + `
  placementRefs: []`,
			wantErr: []string{"spec.placementRefs", "should have at least 1 items"},
			good: mwrs + `
  placementRefs: [{name: gpu}]`,
		},
		"ManifestWorkReplicaSet: the same Placement twice": {
			bad: mwrs + `
  placementRefs: [{name: gpu}, {name: gpu, rolloutStrategy: {type: Progressive}}]`,
			wantErr: []string{"spec.placementRefs", "placementRefs names the same Placement twice"},
			good: mwrs + `
  placementRefs: [{name: gpu}, {name: gpu-eu, rolloutStrategy: {type: Progressive}}]`,
		},
		"ManifestWorkReplicaSet: cascadeDeletionPolicy not in the enum": {
			bad: mwrs + `
  placementRefs: [{name: gpu}]
  cascadeDeletionPolicy: Orphan`,
			wantErr: []string{`spec.cascadeDeletionPolicy: Unsupported value: "Orphan"`, `"Background", "Foreground"`},
			good: mwrs + `
  placementRefs: [{name: gpu}]
  cascadeDeletionPolicy: Foreground`,
		},
	})
}
