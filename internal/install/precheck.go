package install

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
)

// ocmHubDeployments are the Deployments of OCM's hub (cluster-manager and its controllers), by
// namespace.
var ocmHubDeployments = map[string][]string{
	"open-cluster-management":     {"cluster-manager"},
	"open-cluster-management-hub": {"cluster-manager-registration-controller", "cluster-manager-placement-controller", "cluster-manager-work-webhook"},
}

// CheckNoOCMHub fails when OCM's hub (its cluster-manager operator, or the controllers it runs)
// is installed on the cluster: both would serve and reconcile the same APIs.
func CheckNoOCMHub(ctx context.Context, cs kubernetes.Interface) error {
	const fix = "Flotilla's hub serves the same APIs: remove OCM's hub first (clusteradm clean), or install Flotilla on another cluster; docs/install.md says what an OCM user keeps"
	list, err := cs.Discovery().ServerResourcesForGroupVersion("operator.open-cluster-management.io/v1")
	if err == nil {
		for _, r := range list.APIResources {
			if r.Name == "clustermanagers" {
				return fmt.Errorf("OCM's cluster-manager operator is installed (the API operator.open-cluster-management.io/v1 ClusterManager is served): %s", fix)
			}
		}
	} else if !apierrors.IsNotFound(err) && !discovery.IsGroupDiscoveryFailedError(err) {
		return fmt.Errorf("asking the cluster whether OCM's hub is installed: %w", err)
	}
	for ns, names := range ocmHubDeployments {
		for _, name := range names {
			_, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
			if err == nil {
				return fmt.Errorf("OCM's hub runs here (Deployment %s/%s): %s", ns, name, fix)
			}
			if !apierrors.IsNotFound(err) {
				return fmt.Errorf("asking the cluster whether OCM's hub is installed: %w", err)
			}
		}
	}
	return nil
}

// VersionLabel carries the version of Flotilla an object was installed with.
const VersionLabel = "app.kubernetes.io/version"

// CheckInstalledVersion fails when Deployment ns/name, installed by Flotilla, is of another
// version than version: installing over it would change the CRDs and roles under a running hub.
// what names the part ("hub", "agent") and upgrade the way to replace it.
func CheckInstalledVersion(ctx context.Context, cs kubernetes.Interface, ns, name, version, what, upgrade string) error {
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Deployment %s/%s: %w", ns, name, err)
	}
	l := d.GetLabels()
	if l[PartOfLabel] != PartOf {
		return fmt.Errorf("the Deployment %s/%s exists and Flotilla did not install it (no label %s=%s): remove it or install into another namespace", ns, name, PartOfLabel, PartOf)
	}
	if got := l[VersionLabel]; got != version {
		return fmt.Errorf("a Flotilla %s of version %q runs here (Deployment %s/%s), and this is %q: %s", what, got, ns, name, version, upgrade)
	}
	return nil
}
