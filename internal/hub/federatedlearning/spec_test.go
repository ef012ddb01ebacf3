package federatedlearning

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
)

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		fl         *flv1alpha1.FederatedLearning
		allowLocal bool
		want       []string
	}{
		"flower with defaults": {fl: makeFL("a").Obj()},
		"openfl complete": {fl: makeFL("a").Framework(flv1alpha1.FrameworkOpenFL).
			Listener(grpc(flv1alpha1.ListenerTypeNodePort, 30089)).
			Storage(flv1alpha1.ModelStorageSpec{Type: flv1alpha1.StorageTypePersistentVolumeClaim, Name: "model", Path: "/model"}).Obj()},
		"unknown framework": {fl: makeFL("a").Framework("tensorflow-federated").Obj(),
			want: []string{`spec.framework "tensorflow-federated" is not a framework Flotilla runs: set flower, openfl or other`}},
		"node port outside the range": {fl: makeFL("a").Framework(flv1alpha1.FrameworkOpenFL).
			Listener(grpc(flv1alpha1.ListenerTypeNodePort, 8080)).
			Storage(flv1alpha1.ModelStorageSpec{Type: flv1alpha1.StorageTypeHostPath, Path: "/m"}).Obj(),
			want: []string{"spec.server.listeners[0].port 8080 is outside the NodePort range 30000-32767: set a port in that range, or use type LoadBalancer"}},
		"storage not implemented": {fl: makeFL("a").Framework(flv1alpha1.FrameworkOther).
			Listener(grpc(flv1alpha1.ListenerTypeLoadBalancer, 8080)).
			Storage(flv1alpha1.ModelStorageSpec{Type: flv1alpha1.StorageTypeS3Bucket}).Obj(),
			want: []string{"spec.server.storage.type S3Bucket is not implemented (OCM's controller does not implement it either): use PersistentVolumeClaim or HostPath"}},
		"route listener, no storage, no images": {fl: func() *flv1alpha1.FederatedLearning {
			fl := makeFL("a").Framework(flv1alpha1.FrameworkOpenFL).Listener(grpc(flv1alpha1.ListenerTypeRoute, 443)).Obj()
			fl.Spec.Server.Image, fl.Spec.Client.Image = "", ""
			return fl
		}(), want: []string{
			"spec.server.image is empty: set the server's container image",
			"spec.client.image is empty: set the client's container image",
			"spec.server.listeners[0].type Route needs OpenShift, which Flotilla does not drive: use NodePort or LoadBalancer",
			"spec.server.storage.type is not set: set PersistentVolumeClaim (name, size, path) or HostPath (path) for the model",
		}},
		"bad supernode": {fl: func() *flv1alpha1.FederatedLearning {
			fl := makeFL("a").Obj()
			fl.Spec.Client.SuperNode = "supernode:9094"
			return fl
		}(), want: []string{`spec.client.supernode "supernode:9094" is not <service>.<namespace>:<port>: set it as flower-supernode.flower-addon:9094`}},
		"superlink on the hub's API server": {fl: superLink("127.0.0.1:6443"),
			want: []string{`spec.server.superlink "127.0.0.1:6443" is refused: refused: 127.0.0.1 is a loopback address: ` + superLinkFix}},
		"superlink on a loopback name": {fl: superLink("localhost:9091"),
			want: []string{`spec.server.superlink "localhost:9091" is refused: refused: localhost is a loopback name: ` + superLinkFix}},
		"superlink on a metadata address, even where local ones are allowed": {fl: superLink("169.254.169.254:80"), allowLocal: true,
			want: []string{`spec.server.superlink "169.254.169.254:80" is refused: refused: 169.254.169.254 is a cloud metadata address: ` + superLinkFix}},
		"superlink on loopback where local ones are allowed": {fl: superLink("127.0.0.1:9091"), allowLocal: true},
		"superlink of the team's own":                        {fl: superLink("superlink.ml-team:9091")},
		"flower-addon's superlink by its full name":          {fl: superLink("superlink.flower-system.svc.cluster.local:9091")},
		"openfl ignores the superlink": {fl: func() *flv1alpha1.FederatedLearning {
			fl := makeFL("a").Framework(flv1alpha1.FrameworkOpenFL).
				Listener(grpc(flv1alpha1.ListenerTypeNodePort, 30089)).
				Storage(flv1alpha1.ModelStorageSpec{Type: flv1alpha1.StorageTypePersistentVolumeClaim, Name: "model", Path: "/model"}).Obj()
			fl.Spec.Server.SuperLink = "127.0.0.1:6443"
			return fl
		}()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, validate(tc.fl, tc.allowLocal)); diff != "" {
				t.Errorf("validate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDataClaimAndNamespace(t *testing.T) {
	fl := makeFL("a").Claim("first", metav1.LabelSelectorOpExists).
		Claim("federated-learning-sample.client-data", metav1.LabelSelectorOpExists).Obj()
	if got := dataClaim(&fl.Spec); got != "federated-learning-sample.client-data" {
		t.Errorf("dataClaim = %q, want the last Exists selector's key", got)
	}
	for in, want := range map[string]string{
		"flower-supernode.flower-addon:9094":                   "flower-addon",
		"flower-supernode.flower-addon.svc.cluster.local:9094": "flower-addon",
	} {
		if got, err := supernodeNamespace(in); err != nil || got != want {
			t.Errorf("supernodeNamespace(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func superLink(addr string) *flv1alpha1.FederatedLearning {
	fl := makeFL("a").Obj()
	fl.Spec.Server.SuperLink = addr
	return fl
}

// A federation that names flower-addon's SuperLink (any of its Service's names) gets one of its
// own; a name that only starts like it is the author's own SuperLink.
func TestUsesFlowerAddOn(t *testing.T) {
	cases := map[string]bool{
		"":                                 true,
		"superlink.flower-system:9091":     true,
		"superlink.flower-system.svc:9091": true,
		"superlink.flower-system.svc.cluster.local:9093": true,
		"superlink.ml-team:9091":                         false,
		"superlink.flower-system.attacker.example:9091":  false,
	}
	for addr, want := range cases {
		if got := usesFlowerAddOn(addr); got != want {
			t.Errorf("usesFlowerAddOn(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestServerAppArgs(t *testing.T) {
	own := makeFL("a").Obj()
	cases := map[string]struct {
		d    *appsv1.Deployment
		want []string
	}{
		"another SuperLink, insecure": {d: desiredServerApp(superLink("superlink.ml-team:9091"), true),
			want: []string{"--insecure", "--appio-api-address=superlink.ml-team:9091", "--plugin-type=serverapp"}},
		"another SuperLink, TLS with the system's roots": {d: desiredServerApp(superLink("superlink.ml-team:9091"), false),
			want: []string{"--appio-api-address=superlink.ml-team:9091", "--plugin-type=serverapp"}},
		"its own SuperLink": {d: desiredOwnServerApp(own, 31234, "a-superlink-0123456789"), want: []string{
			"--appio-api-address=a-superlink." + own.Namespace + ":31234", "--plugin-type=serverapp",
			"--root-certificates=/etc/flower/superlink/ca.crt", "--superexec-auth-secret-file=/etc/flower/superlink/superexec"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.d.Spec.Template.Spec.Containers[0].Args); diff != "" {
				t.Errorf("ServerApp args (-want +got):\n%s", diff)
			}
		})
	}
}
