package kueue

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Every Secret the credentials controller writes says what it is and for which cluster, besides
// ManagedLabel. The hub uses a Secret of its own as a cluster's token or kubeconfig only when
// these say so: under the names of before issue 19, cluster x's token Secret
// (multikueue-token-x, which x's agent could rewrite, labels included) was also the kubeconfig
// Secret of the cluster named token-x, so a Secret with ManagedLabel alone may be a token Secret
// an agent wrote.
const (
	// CredentialLabel is CredentialToken or CredentialKubeconfig.
	CredentialLabel      = "kueue.flotilla.io/credential"
	CredentialToken      = "token"
	CredentialKubeconfig = "kubeconfig"
	// ClusterLabel names the cluster the Secret is for.
	ClusterLabel = "kueue.flotilla.io/cluster"
)

// markedAs says whether the hub wrote obj as cluster's credential of that kind.
func markedAs(obj metav1.Object, kind, cluster string) bool {
	l := obj.GetLabels()
	return managed(obj) && l[CredentialLabel] == kind && l[ClusterLabel] == cluster
}

// secretMeta is the metadata of a Secret the controller makes as cluster's credential of kind.
func secretMeta(namespace, name, kind, cluster string, owner metav1.OwnerReference) metav1.ObjectMeta {
	m := hubMeta(namespace, name, owner)
	m.Labels[CredentialLabel] = kind
	m.Labels[ClusterLabel] = cluster
	return m
}

// wasTokenName says whether cluster's kubeconfig Secret, multikueue-<cluster>, had the name of
// another cluster's token Secret before issue 19: whether cluster is token-<another>. Only such a
// Secret of the hub's, unmarked, can hold what an agent wrote; any other unmarked one of the
// hub's was written by the hub alone (agents could write only multikueue-token-* Secrets).
func wasTokenName(cluster string) bool { return strings.HasPrefix(cluster, "token-") }

// legacyTokenSecret is the name cluster's token Secret had before issue 19. The hub deletes a
// Secret of that name that it made (ManagedLabel) and that is not marked as the kubeconfig of the
// cluster named token-<cluster>; nothing reads it any more.
func legacyTokenSecret(cluster string) string { return "multikueue-token-" + cluster }
