package webhook

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
)

// ReservedNamespaceNames may not name a ManagedCluster: the hub makes a namespace of the cluster's
// name, and these namespaces belong to Kubernetes or to the hub itself (the bootstrap identity
// lives in open-cluster-management). A namespace that exists is refused anyway (see
// ReviewClusterName); these are refused even before they exist.
var ReservedNamespaceNames = []string{
	"default", "kube-system", "kube-public", "kube-node-lease",
	"open-cluster-management", "open-cluster-management-hub",
	"open-cluster-management-agent", "open-cluster-management-agent-addon",
}

// NamespaceLookup returns the namespace of that name, or nil when there is none.
type NamespaceLookup func(ctx context.Context, name string) (*corev1.Namespace, error)

// Namespaces is the hub's NamespaceLookup: it asks the API server.
func Namespaces(cs kubernetes.Interface) NamespaceLookup {
	return func(ctx context.Context, name string) (*corev1.Namespace, error) {
		ns, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return ns, err
	}
}

// nameFix ends every refusal of a cluster name.
const nameFix = "register the cluster under another name (flotilla agent --cluster-name)"

// ReviewClusterName decides whether a new ManagedCluster may take its name. The hub makes a
// namespace of that name for the cluster's agent, so the name must be a DNS label (OCM cannot
// make the namespace otherwise), must not be reserved, and must not be the name of a namespace
// that exists and that the hub did not make for a cluster of this name: the hub would otherwise
// be asked to take over someone else's namespace. It returns the reasons to refuse.
func ReviewClusterName(ctx context.Context, namespaces NamespaceLookup, name string) ([]string, error) {
	subject := fmt.Sprintf("managedclusters %q", name)
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return []string{fmt.Sprintf("%s: metadata.name must be a DNS label, since the hub makes a namespace of that name "+
			"for the cluster (%s); %s", subject, strings.Join(errs, "; "), nameFix)}, nil
	}
	if slices.Contains(ReservedNamespaceNames, name) {
		return []string{fmt.Sprintf("%s: metadata.name %q is reserved: the namespace of that name belongs to Kubernetes "+
			"or to the hub; %s", subject, name, nameFix)}, nil
	}
	if clusteridentity.Reserved(name) {
		return []string{fmt.Sprintf("%s: metadata.name %q is reserved: the identity of the cluster's agents (user %s, group %s) "+
			"would be one OCM gives others (names reserved: %s); %s", subject, name, clusteridentity.User(name, "<agent>"),
			clusteridentity.Group(name), strings.Join(clusteridentity.ReservedClusterNames, ", "), nameFix)}, nil
	}
	ns, err := namespaces(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("%s: reading namespace %q: %w", subject, name, err)
	}
	if ns != nil && !madeForCluster(ns, name) {
		return []string{fmt.Sprintf("%s: namespace %q already exists and the hub did not make it for a cluster; the hub "+
			"would have to take it over to give the cluster's agent access there: %s, or delete the namespace if "+
			"it is unused", subject, name, nameFix)}, nil
	}
	return nil, nil
}

// madeForCluster reports whether ns is a namespace the hub made for a ManagedCluster of that name:
// its controller is such a cluster (an earlier one, whose namespace may still be going away).
func madeForCluster(ns *corev1.Namespace, cluster string) bool {
	ref := metav1.GetControllerOf(ns)
	return ref != nil && ref.Kind == "ManagedCluster" && ref.Name == cluster &&
		strings.HasPrefix(ref.APIVersion, ClusterGroup+"/")
}
