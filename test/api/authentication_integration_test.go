//go:build integration

package api

import authenticationv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"

func init() {
	addToScheme = append(addToScheme, authenticationv1beta1.AddToScheme)
	addValidationCases(map[string]validationCase{
		// The API server's TokenRequest issues no token for less than 10 minutes: OCM's agent
		// would fail on every attempt.
		"ManagedServiceAccount: a validity under ten minutes": {
			bad: `
apiVersion: authentication.open-cluster-management.io/v1beta1
kind: ManagedServiceAccount
metadata: {name: msa-short}
spec: {rotation: {validity: 5m}}`,
			wantErr: []string{"spec.rotation.validity must be at least 10m"},
			good: `
apiVersion: authentication.open-cluster-management.io/v1beta1
kind: ManagedServiceAccount
metadata: {name: msa-ten-minutes}
spec: {rotation: {validity: 10m}}`,
		},
		"ManagedServiceAccount: a negative ttl": {
			bad: `
apiVersion: authentication.open-cluster-management.io/v1beta1
kind: ManagedServiceAccount
metadata: {name: msa-negative-ttl}
spec: {rotation: {}, ttlSecondsAfterCreation: -1}`,
			wantErr: []string{"spec.ttlSecondsAfterCreation"},
			good: `
apiVersion: authentication.open-cluster-management.io/v1beta1
kind: ManagedServiceAccount
metadata: {name: msa-ttl}
spec: {rotation: {}, ttlSecondsAfterCreation: 60}`,
		},
	})
}
