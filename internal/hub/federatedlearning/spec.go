package federatedlearning

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
	"github.com/flotilla/flotilla/internal/egress"
)

// The names of what the controller makes, as OCM's controller names them.
func serverAppName(fl *flv1alpha1.FederatedLearning) string { return fl.Name + "-serverapp" }
func clientAppName(fl *flv1alpha1.FederatedLearning) string { return fl.Name + "-clientapp" }
func serverName(fl *flv1alpha1.FederatedLearning) string    { return fl.Name + "-server" }
func clientJobName(fl *flv1alpha1.FederatedLearning) string { return fl.Name + "-client" }

// dataWorkName and dataConfigMapName are Flotilla's: the per-cluster ManifestWork (which also
// carries the cluster's SuperNode of the federation's own SuperLink) and the ConfigMap that tell
// a Flower client the path its own cluster's claim names.
func dataWorkName(fl *flv1alpha1.FederatedLearning) string      { return fl.Name + "-client-data" }
func dataConfigMapName(fl *flv1alpha1.FederatedLearning) string { return fl.Name + "-data" }

// DataPathEnv is the environment variable through which Flotilla hands a client the path its own
// cluster's data claim names (OpenFL clients get it as --data-path, as in OCM).
const DataPathEnv = "FLOTILLA_DATA_PATH"

// DataPathKey is the key of the data path in the per-cluster ConfigMap.
const DataPathKey = "data-path"

// Default NodePort range of kube-apiserver (--service-node-port-range).
const (
	MinNodePort = 30000
	MaxNodePort = 32767
)

// dataClaim is the claim whose value is each client's data path (FederatedLearningSpec.DataClaim).
func dataClaim(spec *flv1alpha1.FederatedLearningSpec) string { return spec.DataClaim() }

// supernodeNamespace is the namespace of spec.client.supernode (<service>.<namespace>:<port>):
// the part between the first '.' and the ':', where OCM's controller puts the ClientApp.
func supernodeNamespace(supernode string) (string, error) {
	host, _, ok := strings.Cut(supernode, ":")
	_, ns, dot := strings.Cut(host, ".")
	ns, _, _ = strings.Cut(ns, ".")
	if !ok || !dot || ns == "" {
		return "", fmt.Errorf("spec.client.supernode %q is not <service>.<namespace>:<port>: set it as flower-supernode.flower-addon:9094", supernode)
	}
	return ns, nil
}

// superNodeOrDefault and superLinkOrDefault apply the CRD's defaults to objects stored before
// them.
func superNodeOrDefault(s string) string {
	if s == "" {
		return "flower-supernode.flower-addon:9094"
	}
	return s
}

func superLinkOrDefault(s string) string {
	if s == "" {
		return "superlink.flower-system:9091"
	}
	return s
}

// superLinkFix is what to do about a SuperLink the hub refuses.
const superLinkFix = "name a SuperLink the hub may reach, such as its Service (superlink.ml-team:9091), or flower-addon's (superlink.flower-system:9091)"

// checkSuperLink refuses a SuperLink address (host:port) that is not flower-addon's and names a
// metadata service, or a loopback, unspecified or link-local address unless allowLocal, as the
// egress guard does for dynamic scoring; names are checked again, resolved, when dialed.
func checkSuperLink(addr string, allowLocal bool) error {
	if usesFlowerAddOn(addr) {
		return nil
	}
	return egress.CheckURL("https://"+addr, allowLocal)
}

// framework is spec.framework with the CRD's default.
func framework(spec *flv1alpha1.FederatedLearningSpec) flv1alpha1.Framework {
	if spec.Framework == "" {
		return flv1alpha1.FrameworkOther
	}
	return spec.Framework
}

// validate finds what in the spec the controller cannot carry out, each error naming the field
// and the fix. The CRD refuses most bad values; these are the ones it takes, or took in an
// older version, and OCM's controller fails on or ignores.
func validate(fl *flv1alpha1.FederatedLearning, allowLocal bool) []string {
	spec := &fl.Spec
	var errs []string
	if spec.Server.Image == "" {
		errs = append(errs, "spec.server.image is empty: set the server's container image")
	}
	if spec.Client.Image == "" {
		errs = append(errs, "spec.client.image is empty: set the client's container image")
	}
	switch framework(spec) {
	case flv1alpha1.FrameworkFlower:
		if _, err := supernodeNamespace(superNodeOrDefault(spec.Client.SuperNode)); err != nil {
			errs = append(errs, err.Error())
		}
		if err := checkSuperLink(superLinkOrDefault(spec.Server.SuperLink), allowLocal); err != nil {
			errs = append(errs, fmt.Sprintf("spec.server.superlink %q is refused: %v: %s", spec.Server.SuperLink, err, superLinkFix))
		}
	case flv1alpha1.FrameworkOpenFL, flv1alpha1.FrameworkOther:
		errs = append(errs, validateServer(&spec.Server)...)
	default:
		errs = append(errs, fmt.Sprintf("spec.framework %q is not a framework Flotilla runs: set flower, openfl or other", spec.Framework))
	}
	return errs
}

// validateServer checks what the OpenFL path needs: a listener it can expose, storage it
// implements, and a number of rounds.
func validateServer(s *flv1alpha1.ServerSpec) []string {
	var errs []string
	if s.Rounds < 1 {
		errs = append(errs, "spec.server.rounds is not set: set the number of training rounds (1 or more)")
	}
	if len(s.Listeners) == 0 {
		errs = append(errs, "spec.server.listeners is empty: add a listener (type NodePort or LoadBalancer) for the clients to reach the server")
	} else {
		l := s.Listeners[0]
		switch l.Type {
		case flv1alpha1.ListenerTypeNodePort:
			if p := listenerPort(l); p < MinNodePort || p > MaxNodePort {
				errs = append(errs, fmt.Sprintf("spec.server.listeners[0].port %d is outside the NodePort range %d-%d: set a port in that range, or use type LoadBalancer", p, MinNodePort, MaxNodePort))
			}
		case flv1alpha1.ListenerTypeLoadBalancer:
		case flv1alpha1.ListenerTypeRoute:
			errs = append(errs, "spec.server.listeners[0].type Route needs OpenShift, which Flotilla does not drive: use NodePort or LoadBalancer")
		default:
			errs = append(errs, fmt.Sprintf("spec.server.listeners[0].type %q is not set or not known: set NodePort or LoadBalancer", l.Type))
		}
	}
	switch s.Storage.Type {
	case flv1alpha1.StorageTypePersistentVolumeClaim:
		if s.Storage.Name == "" {
			errs = append(errs, "spec.server.storage.name is empty: name the PersistentVolumeClaim")
		}
		if s.Storage.Size != "" {
			if _, err := resource.ParseQuantity(s.Storage.Size); err != nil {
				errs = append(errs, fmt.Sprintf("spec.server.storage.size %q is not a quantity: set one such as 2Gi", s.Storage.Size))
			}
		}
	case flv1alpha1.StorageTypeHostPath:
		if s.Storage.Path == "" {
			errs = append(errs, "spec.server.storage.path is empty: set the hub node's directory")
		}
	case "":
		errs = append(errs, "spec.server.storage.type is not set: set PersistentVolumeClaim (name, size, path) or HostPath (path) for the model")
	default:
		errs = append(errs, fmt.Sprintf("spec.server.storage.type %s is not implemented (OCM's controller does not implement it either): use PersistentVolumeClaim or HostPath", s.Storage.Type))
	}
	if s.Storage.Path == "" && s.Storage.Type == flv1alpha1.StorageTypePersistentVolumeClaim {
		errs = append(errs, "spec.server.storage.path is empty: set where the claim is mounted in the server (the model directory)")
	}
	return errs
}

// listenerPort is a listener's port with the CRD's default.
func listenerPort(l flv1alpha1.ListenerSpec) int32 {
	if l.Port == 0 {
		return 8080
	}
	return l.Port
}
