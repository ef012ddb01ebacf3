// Package multikueueworker is the built-in add-on multikueue-worker: on a MultiKueue worker it
// requests tokens of the ServiceAccount the hub delivered for MultiKueue (package kueueworker)
// and reports each in the Secret the hub made for it in the hub's Kueue namespace (named by the
// ManagedClusterAddOn's annotation kueueworker.TokenSecretAnnotation), from which the hub
// composes the kubeconfig Kueue uses. The hub switches it on for the clusters of its
// MultiKueueConfigs; users do not.
//
// The token is a bound ServiceAccount token (TokenRequest) asking for kueueworker.Lifetime; the
// add-on asks for the next one when kueueworker.RefreshFraction of the lifetime the API server
// granted has passed, and at once when the ServiceAccount was made again (its old tokens stop
// working with it). It looks at the ServiceAccount every Check and at the Secret on the hub
// every Verify, writing the Secret again if it no longer holds the token.
//
// What the agent needs for it: on the worker, get on that ServiceAccount and create on its
// token; on the hub, get and update on that one Secret, which the hub grants with a Role in
// its Kueue namespace bound to the cluster's agents. The agent creates no Secret on the hub.
package multikueueworker
