package workstatus

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// wellKnownStatus lists the values a WellKnownStatus feedback rule reports, per kind. The names
// and paths of Deployment, Job and Pod are OCM's (so hubs reading OCM's values keep working);
// the extra Deployment and Job values, and StatefulSet and DaemonSet, follow OCM's naming.
var wellKnownStatus = map[schema.GroupVersionKind][]workv1.JSONPath{
	{Group: "apps", Version: "v1", Kind: "Deployment"}: {
		{Name: "ReadyReplicas", Path: ".status.readyReplicas"},
		{Name: "Replicas", Path: ".status.replicas"},
		{Name: "AvailableReplicas", Path: ".status.availableReplicas"},
		{Name: "UpdatedReplicas", Path: ".status.updatedReplicas"},
	},
	{Group: "batch", Version: "v1", Kind: "Job"}: {
		{Name: "JobComplete", Path: `.status.conditions[?(@.type=="Complete")].status`},
		{Name: "JobSucceeded", Path: ".status.succeeded"},
		{Name: "JobFailed", Path: ".status.failed"},
		{Name: "JobActive", Path: ".status.active"},
	},
	{Group: "", Version: "v1", Kind: "Pod"}: {
		{Name: "PodReady", Path: `.status.conditions[?(@.type=="Ready")].status`},
		{Name: "PodPhase", Path: ".status.phase"},
	},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"}: {
		{Name: "ReadyReplicas", Path: ".status.readyReplicas"},
		{Name: "Replicas", Path: ".status.replicas"},
		{Name: "AvailableReplicas", Path: ".status.availableReplicas"},
		{Name: "UpdatedReplicas", Path: ".status.updatedReplicas"},
		{Name: "CurrentReplicas", Path: ".status.currentReplicas"},
	},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"}: {
		{Name: "DesiredNumberScheduled", Path: ".status.desiredNumberScheduled"},
		{Name: "CurrentNumberScheduled", Path: ".status.currentNumberScheduled"},
		{Name: "NumberReady", Path: ".status.numberReady"},
		{Name: "NumberAvailable", Path: ".status.numberAvailable"},
		{Name: "UpdatedNumberScheduled", Path: ".status.updatedNumberScheduled"},
	},
}

// wellKnownConditions are the built-in condition rules of WellKnownConditions, per kind and
// condition, as OCM defines them: a Job is Complete when it has finished (Complete or Failed),
// a Pod when its phase is Succeeded or Failed. Unlike OCM's text, they also hold for an object
// read without a status (OCM's fail with "no such key: status" there).
var wellKnownConditions = map[schema.GroupVersionKind]map[string]workv1.ConditionRule{
	{Group: "batch", Version: "v1", Kind: "Job"}: {
		workv1.ManifestComplete: {
			Condition: workv1.ManifestComplete,
			Type:      workv1.CELConditionExpressionsType,
			CelExpressions: []string{
				`has(object.status) && hasConditions(object.status) ? object.status.conditions.filter(c, c.type == 'Complete' || c.type == 'Failed').exists(c, c.status == 'True') : false`,
			},
			MessageExpression: `result ? "Job is finished" : "Job is not finished"`,
		},
	},
	{Group: "", Version: "v1", Kind: "Pod"}: {
		workv1.ManifestComplete: {
			Condition:         workv1.ManifestComplete,
			Type:              workv1.CELConditionExpressionsType,
			CelExpressions:    []string{`has(object.status) && has(object.status.phase) && object.status.phase in ['Succeeded', 'Failed']`},
			MessageExpression: `has(object.status) && has(object.status.phase) ? "Pod is in phase " + object.status.phase : "Pod has no phase yet"`,
		},
	},
}
