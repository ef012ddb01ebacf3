// Package credentialsplugin is `flotilla credentials-plugin`: a client-go exec credential plugin
// (KEP-5339's credentials plugin for ClusterProfiles) that hands a consumer the token of a
// ManagedServiceAccount on the cluster it is asked about.
//
// A consumer of ClusterProfiles (Kueue's MultiKueue, Argo CD's ClusterProfile integration)
// configures it under the provider name open-cluster-management with provideClusterInfo: true.
// client-go runs it with KUBERNETES_EXEC_INFO, an ExecCredential whose spec.cluster.config is the
// ClusterProfile's exec extension, {"clusterName": NAME}. The plugin reads, on the hub and as the
// consumer's own identity (its kubeconfig, or a pod's in-cluster account), the cluster's
// ManagedCluster, ManagedServiceAccount NAME/<--managed-serviceaccount> and its token Secret, and
// prints an ExecCredential with the token and the time at which to ask again.
//
// It refuses, saying why: a cluster that is not accepted or is being deleted, a ManagedServiceAccount
// that has no token or whose token expired, a Secret not made for it, and anything the consumer's
// identity may not read on the hub: the plugin never holds more than the consumer does.
//
// The pure steps are clusterName (the exec input) and credential (the decision); run does the
// reads.
package credentialsplugin
