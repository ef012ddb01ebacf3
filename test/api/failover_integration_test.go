//go:build integration

package api

import failoverv1alpha1 "github.com/flotilla/flotilla/api/failover/v1alpha1"

func init() {
	addToScheme = append(addToScheme, failoverv1alpha1.AddToScheme)
	addValidationCases(map[string]validationCase{
		// A healthy agent renews up to 1.25 lease periods apart: a fence of 5 s under a 10 s
		// lease rises between renewals and stops the fenced workloads of a cluster that never
		// lost the hub.
		"FailoverPolicy: a fence shorter than the lease": {
			bad: `
apiVersion: failover.flotilla.io/v1alpha1
kind: FailoverPolicy
metadata: {name: fop-fence-below-lease}
spec: {clusterSet: gpus, leaseDurationSeconds: 10, fenceAfterSeconds: 5, lostAfterSeconds: 30}`,
			wantErr: []string{"spec.fenceAfterSeconds must be at least twice spec.leaseDurationSeconds",
				"raise fenceAfterSeconds or lower leaseDurationSeconds"},
			good: `
apiVersion: failover.flotilla.io/v1alpha1
kind: FailoverPolicy
metadata: {name: fop-fence-two-leases}
spec: {clusterSet: gpus, leaseDurationSeconds: 10, fenceAfterSeconds: 20, lostAfterSeconds: 35}`,
		},
		"FailoverPolicy: a fence under two leases": {
			bad: `
apiVersion: failover.flotilla.io/v1alpha1
kind: FailoverPolicy
metadata: {name: fop-fence-below-two-leases}
spec: {clusterSet: gpus, leaseDurationSeconds: 10, fenceAfterSeconds: 19, lostAfterSeconds: 40}`,
			wantErr: []string{"spec.fenceAfterSeconds must be at least twice spec.leaseDurationSeconds"},
			good: `
apiVersion: failover.flotilla.io/v1alpha1
kind: FailoverPolicy
metadata: {name: fop-fence-twenty}
spec: {clusterSet: gpus, leaseDurationSeconds: 10, fenceAfterSeconds: 20, lostAfterSeconds: 40}`,
		},
		// The API's defaults (lease 5 s) count: a fence of 9 s with the default lease is refused.
		"FailoverPolicy: a fence under two default leases": {
			bad: `
apiVersion: failover.flotilla.io/v1alpha1
kind: FailoverPolicy
metadata: {name: fop-fence-default-lease}
spec: {clusterSet: gpus, fenceAfterSeconds: 9}`,
			wantErr: []string{"spec.fenceAfterSeconds must be at least twice spec.leaseDurationSeconds"},
			good: `
apiVersion: failover.flotilla.io/v1alpha1
kind: FailoverPolicy
metadata: {name: fop-fence-ten-default-lease}
spec: {clusterSet: gpus, fenceAfterSeconds: 10}`,
		},
		"FailoverPolicy: lost before the fence has stopped the work": {
			bad: `
apiVersion: failover.flotilla.io/v1alpha1
kind: FailoverPolicy
metadata: {name: fop-lost-too-soon}
spec: {clusterSet: gpus, leaseDurationSeconds: 5, fenceAfterSeconds: 20, lostAfterSeconds: 29}`,
			wantErr: []string{"spec.lostAfterSeconds must be at least spec.fenceAfterSeconds + spec.leaseDurationSeconds + 5"},
			good: `
apiVersion: failover.flotilla.io/v1alpha1
kind: FailoverPolicy
metadata: {name: fop-lost-in-time}
spec: {clusterSet: gpus, leaseDurationSeconds: 5, fenceAfterSeconds: 20, lostAfterSeconds: 30}`,
		},
	})
}
