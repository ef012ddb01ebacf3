//go:build integration

package api

import queuev1alpha1 "github.com/flotilla/flotilla/api/queue/v1alpha1"

func init() {
	addToScheme = append(addToScheme, queuev1alpha1.AddToScheme)
	addValidationCases(map[string]validationCase{
		"FleetQueue: a team name that cannot name a ClusterQueue": {
			bad: `
apiVersion: queue.flotilla.io/v1alpha1
kind: FleetQueue
metadata: {name: fq-bad-team}
spec:
  admissionCheck: multikueue
  teams: [{name: Research_Team, namespace: research}]`,
			wantErr: []string{"spec.teams[0].name"},
			good: `
apiVersion: queue.flotilla.io/v1alpha1
kind: FleetQueue
metadata: {name: fq-good-team}
spec:
  admissionCheck: multikueue
  teams: [{name: research-team, namespace: research}]`,
		},
		"FleetQueue: no teams": {
			bad: `
apiVersion: queue.flotilla.io/v1alpha1
kind: FleetQueue
metadata: {name: fq-no-teams}
spec:
  admissionCheck: multikueue
  teams: []`,
			wantErr: []string{"spec.teams"},
			good: `
apiVersion: queue.flotilla.io/v1alpha1
kind: FleetQueue
metadata: {name: fq-one-team}
spec:
  admissionCheck: multikueue
  teams: [{name: a, namespace: a}]`,
		},
		"FleetQueue: zero guaranteed GPUs": {
			bad: `
apiVersion: queue.flotilla.io/v1alpha1
kind: FleetQueue
metadata: {name: fq-zero-gpus}
spec:
  admissionCheck: multikueue
  teams: [{name: a, namespace: a, guaranteed: [{model: NVIDIA-H100-80GB-HBM3, gpus: 0}]}]`,
			wantErr: []string{"spec.teams[0].guaranteed[0].gpus"},
			good: `
apiVersion: queue.flotilla.io/v1alpha1
kind: FleetQueue
metadata: {name: fq-one-gpu}
spec:
  admissionCheck: multikueue
  teams: [{name: a, namespace: a, guaranteed: [{model: NVIDIA-H100-80GB-HBM3, gpus: 1}]}]`,
		},
		"FleetQueue: a reclaim policy Kueue does not have": {
			bad: `
apiVersion: queue.flotilla.io/v1alpha1
kind: FleetQueue
metadata: {name: fq-bad-reclaim}
spec:
  admissionCheck: multikueue
  reclaim: Always
  teams: [{name: a, namespace: a}]`,
			wantErr: []string{"spec.reclaim", "Any", "LowerPriority", "Never"},
			good: `
apiVersion: queue.flotilla.io/v1alpha1
kind: FleetQueue
metadata: {name: fq-never-reclaim}
spec:
  admissionCheck: multikueue
  reclaim: Never
  teams: [{name: a, namespace: a}]`,
		},
	})
}
