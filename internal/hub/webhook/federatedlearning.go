package webhook

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/federatedlearning"
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

// PlacementPermission is what choosing the clients of a FederatedLearning in namespace ns needs:
// the hub creates its Placement there, tolerations and all.
func PlacementPermission(ns string) Permission {
	return CreatePermission(ClusterGroup, "placements", ns)
}

// HostPathPermission is what storage type HostPath needs: the hub mounts the hub node's
// directory spec.server.storage.path (DirectoryOrCreate) into the server's pod in namespace ns,
// which admission policies keyed to the requester never see, since the hub makes the pod. No
// built-in role holds it: an administrator grants `use` on federatedlearnings/hostpath to those
// who may.
func HostPathPermission(ns string) Permission {
	return Permission{Verb: "use", Group: FederationGroup, Resource: "federatedlearnings", Subresource: "hostpath", Namespace: ns}
}

// FederatedLearningHandler validates writes to FederatedLearnings (ReviewFederatedLearning).
func FederatedLearningHandler(s *runtime.Scheme, can Authorizer) admission.Handler {
	return handler[flv1alpha1.FederatedLearning](admission.NewDecoder(s), can, ReviewFederatedLearning)
}

// ReviewFederatedLearning decides whether user may write the FederatedLearning cur over old
// (nil when creating). The hub carries out the whole spec as the writer's word, so a create, and
// an update that changes spec, need what the hub would make for them, each in the
// FederatedLearning's namespace unless said:
//   - create on managedclustersets/bind for every set in spec.client.placement.clusterSets, as a
//     ManagedClusterSetBinding would (ReviewBinding);
//   - PlacementPermission (the Placement of spec.client.placement, with its tolerations);
//   - ServerPermission for spec.framework;
//   - for flower with flower-addon's SuperLink address (the default), which gives the federation a
//     SuperLink of its own: create on services (its NodePort Service) and on secrets (its keys);
//   - for openfl and other: create on services for spec.server.listeners[0] (a NodePort or
//     LoadBalancer Service), and for spec.server.storage create on persistentvolumeclaims (type
//     PersistentVolumeClaim, of the size it names) or HostPathPermission (type HostPath);
//   - ClientPermission.
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

	what := fmt.Sprintf("spec.client.placement makes the hub create Placement %q in namespace %q", cur.Name, ns)
	if n := len(cur.Spec.Client.Placement.Tolerations); n > 0 {
		what = fmt.Sprintf("spec.client.placement makes the hub create Placement %q in namespace %q, with its %d tolerations", cur.Name, ns, n)
	}
	if err := need(PlacementPermission(ns), what); err != nil {
		return nil, err
	}

	fw := cur.Spec.Framework
	if fw == "" {
		fw = flv1alpha1.FrameworkOther
	}
	kind := "Job"
	if fw == flv1alpha1.FrameworkFlower {
		kind = "Deployment"
	}
	what = fmt.Sprintf("%s makes the hub run the server in namespace %q as a %s (spec.framework %s)",
		field("spec.server.image", cur.Spec.Server.Image), ns, kind, fw)
	if err := need(ServerPermission(fw, ns), what); err != nil {
		return nil, err
	}
	if fw != flv1alpha1.FrameworkFlower {
		// Flower ignores listeners and storage: its server talks to the SuperLink.
		if err := reviewOpenFLServer(cur, need); err != nil {
			return nil, err
		}
	} else if federatedlearning.UsesOwnSuperLink(cur.Spec.Server.SuperLink) {
		link := cur.Name + "-superlink"
		what := fmt.Sprintf("spec.server.superlink %q (flower-addon's) makes the hub run a SuperLink of the federation's own in namespace %q: "+
			"Service %q of type NodePort, taking a node port on every hub node", federatedlearning.SuperLinkOrDefault(cur.Spec.Server.SuperLink), ns, link)
		if err := need(CreatePermission("", "services", ns), what); err != nil {
			return nil, err
		}
		what = fmt.Sprintf("spec.server.superlink %q (flower-addon's) makes the hub keep the federation's keys in Secret %q in namespace %q",
			federatedlearning.SuperLinkOrDefault(cur.Spec.Server.SuperLink), link, ns)
		if err := need(CreatePermission("", "secrets", ns), what); err != nil {
			return nil, err
		}
	}
	what = fmt.Sprintf("%s makes the hub run the client on the clusters spec.client.placement chooses from the sets bound "+
		"to namespace %q", field("spec.client.image", cur.Spec.Client.Image), ns)
	if err := need(ClientPermission(ns), what); err != nil {
		return nil, err
	}
	return denials, nil
}

// reviewOpenFLServer asks for what the OpenFL (and other) server makes beside its Job: the
// Service of listeners[0] and the model's storage.
func reviewOpenFLServer(cur *flv1alpha1.FederatedLearning, need func(Permission, string) error) error {
	ns, s := cur.Namespace, cur.Spec.Server
	if len(s.Listeners) > 0 {
		l := s.Listeners[0]
		port := l.Port
		if port == 0 {
			port = 8080
		}
		what := fmt.Sprintf("spec.server.listeners[0] (type %s, port %d) makes the hub create Service %q of type %s in namespace %q",
			nonEmptyOr(string(l.Type), "unset"), port, cur.Name+"-server", serviceType(l.Type), ns)
		if l.Type == flv1alpha1.ListenerTypeNodePort {
			what += fmt.Sprintf(", taking node port %d on every hub node", port)
		}
		if err := need(CreatePermission("", "services", ns), what); err != nil {
			return err
		}
	}
	switch s.Storage.Type {
	case flv1alpha1.StorageTypePersistentVolumeClaim:
		size := nonEmptyOr(s.Storage.Size, "2Gi")
		what := fmt.Sprintf("spec.server.storage (type PersistentVolumeClaim, size %s) makes the hub create PersistentVolumeClaim %q in namespace %q",
			size, s.Storage.Name, ns)
		if err := need(CreatePermission("", "persistentvolumeclaims", ns), what); err != nil {
			return err
		}
	case flv1alpha1.StorageTypeHostPath:
		what := fmt.Sprintf("spec.server.storage (type HostPath, path %q) makes the hub mount that directory of a hub node, created if missing, "+
			"into the server's pod in namespace %q; only a hub administrator may allow it", s.Storage.Path, ns)
		if err := need(HostPathPermission(ns), what); err != nil {
			return err
		}
	}
	return nil
}

// serviceType is the type of the Service the hub makes for a listener type: NodePort for
// NodePort, LoadBalancer otherwise (internal/hub/federatedlearning).
func serviceType(t flv1alpha1.ListenerType) string {
	if t == flv1alpha1.ListenerTypeNodePort {
		return "NodePort"
	}
	return "LoadBalancer"
}

func nonEmptyOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// field names a field and, when set, its value.
func field(path, value string) string {
	if value == "" {
		return path
	}
	return fmt.Sprintf("%s (%q)", path, value)
}
