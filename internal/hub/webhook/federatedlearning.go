package webhook

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
)

// A FederatedLearning makes the hub act on the requester's behalf: its controller
// (internal/hub/federatedlearning) binds every set of spec.client.placement.clusterSets to the
// FederatedLearning's namespace, starts the server there with spec.server.image, and runs
// spec.client.image on the clusters the placement chooses. The hub may do all of that; the
// requester may not have been allowed to. ReviewFederatedLearning asks, as the requester, for the
// permissions each of those writes would need had the requester made it.

// FederationGroup is the API group of FederatedLearnings.
const FederationGroup = "federation-ai.open-cluster-management.io"

// FederatedLearningPath is where the FederatedLearning webhook is served,
// FederatedLearningWebhookName its name in the configuration.
const (
	FederatedLearningPath        = "/validate-federatedlearnings"
	FederatedLearningWebhookName = "federatedlearnings.hub.flotilla.io"
)

// CreatePermission is the permission to create resource (plural) of group in namespace ns.
func CreatePermission(group, resource, ns string) Permission {
	return Permission{Verb: "create", Group: group, Resource: resource, Namespace: ns}
}

// ServerPermission is what running the server of a FederatedLearning in namespace ns with
// framework fw needs: create deployments for flower (the hub runs the ServerApp as a
// Deployment), create jobs otherwise (openfl and other, the server Job; empty is other).
func ServerPermission(fw flv1alpha1.Framework, ns string) Permission {
	if fw == flv1alpha1.FrameworkFlower {
		return CreatePermission("apps", "deployments", ns)
	}
	return CreatePermission("batch", "jobs", ns)
}

// ClientPermission is what running the clients of a FederatedLearning in namespace ns needs:
// create manifestworkreplicasets there, the permission to deploy from that namespace to the
// clusters of the sets bound to it.
func ClientPermission(ns string) Permission {
	return CreatePermission(WorkGroup, "manifestworkreplicasets", ns)
}

// FederatedLearningHandler validates writes to FederatedLearnings (ReviewFederatedLearning).
func FederatedLearningHandler(s *runtime.Scheme, can Authorizer) admission.Handler {
	return handler[flv1alpha1.FederatedLearning](admission.NewDecoder(s), can, ReviewFederatedLearning)
}

// ReviewFederatedLearning decides whether user may write the FederatedLearning cur over old
// (nil when creating). The hub carries out the whole spec as the writer's word, so a create, and
// an update that changes spec, need:
//   - create on managedclustersets/bind for every set in spec.client.placement.clusterSets, as a
//     ManagedClusterSetBinding would (ReviewBinding);
//   - ServerPermission for spec.framework in the FederatedLearning's namespace;
//   - ClientPermission in that namespace.
//
// An update that leaves spec as it was (labels, finalizers, deletion) is always allowed. It
// returns the reasons to refuse; an error means it could not decide.
func ReviewFederatedLearning(ctx context.Context, can Authorizer, user authenticationv1.UserInfo, old, cur *flv1alpha1.FederatedLearning) ([]string, error) {
	if old != nil && equality.Semantic.DeepEqual(old.Spec, cur.Spec) {
		return nil, nil
	}
	ns := cur.Namespace
	subject := fmt.Sprintf("federatedlearnings %q in namespace %q", cur.Name, ns)
	var denials []string
	need := func(p Permission, what string) error {
		ok, err := can(ctx, user, p)
		if err != nil {
			return fmt.Errorf("%s: checking whether %s may %s: %w", subject, user.Username, p, err)
		}
		if !ok {
			denials = append(denials, fmt.Sprintf("%s: %s, which needs permission to %s; %s", subject, what, p, grantHint))
		}
		return nil
	}

	asked := map[string]bool{}
	for i, set := range cur.Spec.Client.Placement.ClusterSets {
		if asked[set] {
			continue // said at its first index
		}
		asked[set] = true
		what := fmt.Sprintf("spec.client.placement.clusterSets[%d] makes the hub bind set %q to namespace %q", i, set, ns)
		if err := need(BindPermission(set), what); err != nil {
			return nil, err
		}
	}

	fw := cur.Spec.Framework
	if fw == "" {
		fw = flv1alpha1.FrameworkOther
	}
	kind := "Job"
	if fw == flv1alpha1.FrameworkFlower {
		kind = "Deployment"
	}
	what := fmt.Sprintf("%s makes the hub run the server in namespace %q as a %s (spec.framework %s)",
		field("spec.server.image", cur.Spec.Server.Image), ns, kind, fw)
	if err := need(ServerPermission(fw, ns), what); err != nil {
		return nil, err
	}
	what = fmt.Sprintf("%s makes the hub run the client on the clusters spec.client.placement chooses from the sets bound "+
		"to namespace %q", field("spec.client.image", cur.Spec.Client.Image), ns)
	if err := need(ClientPermission(ns), what); err != nil {
		return nil, err
	}
	return denials, nil
}

// field names a field and, when set, its value.
func field(path, value string) string {
	if value == "" {
		return path
	}
	return fmt.Sprintf("%s (%q)", path, value)
}
