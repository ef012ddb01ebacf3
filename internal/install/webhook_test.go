package install

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestReadyEndpoints(t *testing.T) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "flotilla-system", Name: "flotilla-hub-webhook"},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app.kubernetes.io/name": "flotilla-hub"}},
	}
	none := "Service flotilla-system/flotilla-hub-webhook has no ready endpoints: no ready pod matches its selector " +
		"app.kubernetes.io/name=flotilla-hub (are the hub's pods ready, and do their labels match?)"
	endpoint := func(ready *bool) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{"10.251.1.5"}, Conditions: discoveryv1.EndpointConditions{Ready: ready}}
	}
	for name, tc := range map[string]struct {
		slices []discoveryv1.EndpointSlice
		want   string
	}{
		"no slice":             {want: none},
		"a slice without pods": {slices: []discoveryv1.EndpointSlice{{}}, want: none},
		"only unready pods":    {slices: []discoveryv1.EndpointSlice{{Endpoints: []discoveryv1.Endpoint{endpoint(ptr.To(false))}}}, want: none},
		"a ready pod":          {slices: []discoveryv1.EndpointSlice{{Endpoints: []discoveryv1.Endpoint{endpoint(ptr.To(false)), endpoint(ptr.To(true))}}}},
		"readiness not (yet) known counts as ready, as kube-proxy does": {slices: []discoveryv1.EndpointSlice{{Endpoints: []discoveryv1.Endpoint{endpoint(nil)}}}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, readyEndpoints(svc, tc.slices)); diff != "" {
				t.Errorf("readyEndpoints (-want +got):\n%s", diff)
			}
		})
	}
}
