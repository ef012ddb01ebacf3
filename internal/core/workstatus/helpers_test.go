package workstatus

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(t *testing.T, json string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(json)); err != nil {
		t.Fatalf("bad test object: %v", err)
	}
	return u
}

func ptr[T any](v T) *T { return &v }

const (
	deploymentJSON = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"apps"},
		"spec":{"replicas":3},
		"status":{"replicas":3,"readyReplicas":2,"availableReplicas":2,"updatedReplicas":3,
		"conditions":[{"type":"Available","status":"True"},{"type":"Progressing","status":"True"}]}}`
	jobDoneJSON = `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"train","namespace":"ml"},
		"status":{"succeeded":4,"conditions":[{"type":"Complete","status":"True"}]}}`
	jobRunningJSON = `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"train","namespace":"ml"},
		"status":{"active":2}}`
	jobFailedJSON = `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"train","namespace":"ml"},
		"status":{"failed":6,"conditions":[{"type":"Failed","status":"True"}]}}`
	podJSON = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ml"},
		"status":{"phase":"Succeeded","conditions":[{"type":"Ready","status":"False"}]}}`
	statefulSetJSON = `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"apps"},
		"status":{"replicas":3,"readyReplicas":3,"availableReplicas":3,"updatedReplicas":3,"currentReplicas":3}}`
	daemonSetJSON = `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"agent","namespace":"kube-system"},
		"status":{"desiredNumberScheduled":5,"currentNumberScheduled":5,"numberReady":4,"numberAvailable":4,"updatedNumberScheduled":5}}`
	configMapJSON = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"apps"},"data":{"k":"v"}}`
)
