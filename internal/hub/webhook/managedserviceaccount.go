package webhook

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	authv1beta1 "github.com/flotilla/flotilla/api/authentication/v1beta1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
)

// AuthenticationGroup is the API group of ManagedServiceAccounts.
const AuthenticationGroup = "authentication.open-cluster-management.io"

// ManagedServiceAccountPath is where the ManagedServiceAccount webhook is served,
// ManagedServiceAccountWebhookName its name in the configuration.
const (
	ManagedServiceAccountPath        = "/validate-managedserviceaccounts"
	ManagedServiceAccountWebhookName = "managedserviceaccounts.hub.flotilla.io"
)

// ClusterLookup says whether a ManagedCluster of that name exists.
type ClusterLookup func(ctx context.Context, name string) (bool, error)

// Clusters looks ManagedClusters up with r (the manager's API reader: a webhook answers from the
// server, not from a cache that may lag a cluster just registered).
func Clusters(r client.Reader) ClusterLookup {
	return func(ctx context.Context, name string) (bool, error) {
		err := r.Get(ctx, client.ObjectKey{Name: name}, &clusterv1.ManagedCluster{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	}
}

// ManagedServiceAccountHandler validates new ManagedServiceAccounts (ReviewManagedServiceAccount).
func ManagedServiceAccountHandler(s *runtime.Scheme, clusters ClusterLookup) admission.Handler {
	return handler(admission.NewDecoder(s), nil, func(ctx context.Context, _ Authorizer, _ authenticationv1.UserInfo, old, cur *authv1beta1.ManagedServiceAccount) ([]string, error) {
		return ReviewManagedServiceAccount(ctx, clusters, old, cur)
	})
}

// ReviewManagedServiceAccount refuses a new ManagedServiceAccount outside the namespace of a
// ManagedCluster: only a cluster's agent serves one, in its cluster's namespace, so anywhere else
// it would wait for ever with no condition saying why. OCM accepts it and does nothing.
func ReviewManagedServiceAccount(ctx context.Context, clusters ClusterLookup, old, cur *authv1beta1.ManagedServiceAccount) ([]string, error) {
	if old != nil {
		return nil, nil // the namespace cannot change
	}
	ok, err := clusters(ctx, cur.Namespace)
	if err != nil {
		return nil, fmt.Errorf("managedserviceaccounts %q: looking up ManagedCluster %q: %w", cur.Name, cur.Namespace, err)
	}
	if ok {
		return nil, nil
	}
	return []string{fmt.Sprintf("managedserviceaccounts %q in namespace %q: metadata.namespace names no ManagedCluster; "+
		"a ManagedServiceAccount is served by the agent of the cluster whose namespace it is in: create it in the "+
		"namespace of the cluster that should have the ServiceAccount (kubectl get managedclusters)", cur.Name, cur.Namespace)}, nil
}

// createOnly makes w match creates only.
func createOnly(w admissionregistrationv1.ValidatingWebhook) admissionregistrationv1.ValidatingWebhook {
	for i := range w.Rules {
		w.Rules[i].Operations = []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
	}
	return w
}
