// Package kueueworker says what a MultiKueue worker needs, in one place for the hub and the
// agent: the ServiceAccount MultiKueue acts as on the worker and the least rules it needs
// (delivered by the hub in a ManifestWork), the hub Secret in which the worker's agent reports a
// token of that ServiceAccount, and the kubeconfig the hub composes from it for Kueue.
//
// The flow, OCM's managed-serviceaccount pattern (the hub never reaches a spoke itself):
//
//  1. The hub puts WorkName in the cluster's namespace: Namespace, ServiceAccount, ClusterRole
//     and ClusterRoleBinding (Manifests).
//  2. The hub makes an empty Secret TokenSecret(cluster) (multikueue-token.<cluster>: no other
//     cluster's Secret can bear that name) in its Kueue namespace, a Role that
//     lets the cluster's agents read and update that one Secret (TokenRole), and switches on the
//     built-in add-on AddOnName on the cluster, with TokenSecretAnnotation saying where the
//     Secret is. The agent requests a token of the ServiceAccount (TokenRequest, Lifetime),
//     writes it there, and requests a new one when RefreshFraction of its lifetime has passed.
//     (The Secret is in the Kueue namespace, made by the hub, because the hub may write Secrets
//     there and nowhere else: it cannot let agents create Secrets in their own namespaces
//     without holding that right in every namespace.)
//  3. The hub composes the kubeconfig (Kubeconfig) into the Secret multikueue-<cluster> in the
//     Kueue namespace, which the cluster's MultiKueueCluster names.
//
// When the cluster leaves every MultiKueueConfig, the hub deletes the work (and with it the
// ServiceAccount, so every token of it stops working), switches the add-on off and deletes the
// token Secret, its Role and the kubeconfig.
package kueueworker
