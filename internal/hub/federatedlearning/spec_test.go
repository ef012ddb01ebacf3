package federatedlearning

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	flv1alpha1 "github.com/flotilla/flotilla/api/federationai/v1alpha1"
)

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		fl   *flv1alpha1.FederatedLearning
		want []string
	}{
		"flower with defaults": {fl: makeFL("a").obj()},
		"openfl complete": {fl: makeFL("a").framework(flv1alpha1.FrameworkOpenFL).
			listener(flv1alpha1.ListenerTypeNodePort, 30089).storage(flv1alpha1.StorageTypePersistentVolumeClaim, "model", "/model").obj()},
		"unknown framework": {fl: makeFL("a").framework("tensorflow-federated").obj(),
			want: []string{`spec.framework "tensorflow-federated" is not a framework Flotilla runs: set flower, openfl or other`}},
		"node port outside the range": {fl: makeFL("a").framework(flv1alpha1.FrameworkOpenFL).
			listener(flv1alpha1.ListenerTypeNodePort, 8080).storage(flv1alpha1.StorageTypeHostPath, "", "/m").obj(),
			want: []string{"spec.server.listeners[0].port 8080 is outside the NodePort range 30000-32767: set a port in that range, or use type LoadBalancer"}},
		"storage not implemented": {fl: makeFL("a").framework(flv1alpha1.FrameworkOther).
			listener(flv1alpha1.ListenerTypeLoadBalancer, 8080).storage(flv1alpha1.StorageTypeS3Bucket, "", "").obj(),
			want: []string{"spec.server.storage.type S3Bucket is not implemented (OCM's controller does not implement it either): use PersistentVolumeClaim or HostPath"}},
		"route listener, no storage, no images": {fl: func() *flv1alpha1.FederatedLearning {
			fl := makeFL("a").framework(flv1alpha1.FrameworkOpenFL).listener(flv1alpha1.ListenerTypeRoute, 443).obj()
			fl.Spec.Server.Image, fl.Spec.Client.Image = "", ""
			return fl
		}(), want: []string{
			"spec.server.image is empty: set the server's container image",
			"spec.client.image is empty: set the client's container image",
			"spec.server.listeners[0].type Route needs OpenShift, which Flotilla does not drive: use NodePort or LoadBalancer",
			"spec.server.storage.type is not set: set PersistentVolumeClaim (name, size, path) or HostPath (path) for the model",
		}},
		"bad supernode": {fl: func() *flv1alpha1.FederatedLearning {
			fl := makeFL("a").obj()
			fl.Spec.Client.SuperNode = "supernode:9094"
			return fl
		}(), want: []string{`spec.client.supernode "supernode:9094" is not <service>.<namespace>:<port>: set it as flower-supernode.flower-addon:9094`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, validate(tc.fl)); diff != "" {
				t.Errorf("validate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDataClaimAndNamespace(t *testing.T) {
	fl := makeFL("a").claim("first").claim("federated-learning-sample.client-data").obj()
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
