package webhook

import (
	"fmt"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
)

// Endpoint is where the API server sends admission and conversion reviews: either a URL
// (https://host:port, a hub beside its API server) or a Service (a hub running in the cluster,
// behind a Service whose endpoints are every replica).
type Endpoint struct {
	// URL is https://host:port, without a path; used when Service is nil.
	URL string
	// Service names the hub's Service when it runs in the cluster.
	Service *ServiceRef
}

// ServiceRef names a Service and its port.
type ServiceRef struct {
	Namespace, Name string
	Port            int32
}

// ParseServiceRef reads NAMESPACE/NAME[:PORT] (port 443 when absent), as --webhook-service takes it.
func ParseServiceRef(flag, s string) (*ServiceRef, error) {
	fail := func(why string) error {
		return fmt.Errorf("%s %q: %s; give NAMESPACE/NAME[:PORT], such as open-cluster-management-hub/flotilla-hub-webhook:443", flag, s, why)
	}
	ns, rest, ok := strings.Cut(s, "/")
	if !ok {
		return nil, fail("no namespace")
	}
	name, portText, hasPort := strings.Cut(rest, ":")
	port := int64(443)
	if hasPort {
		p, err := strconv.ParseInt(portText, 10, 32)
		if err != nil || p < 1 || p > 65535 {
			return nil, fail("the port is not a number from 1 to 65535")
		}
		port = p
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return nil, fail("the namespace is not a DNS label: " + strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
		return nil, fail("the Service name is not a DNS-1035 label: " + strings.Join(errs, "; "))
	}
	return &ServiceRef{Namespace: ns, Name: name, Port: int32(port)}, nil
}

// String is how logs name the endpoint.
func (e Endpoint) String() string {
	if e.Service != nil {
		return fmt.Sprintf("service %s/%s:%d", e.Service.Namespace, e.Service.Name, e.Service.Port)
	}
	return e.URL
}

// admission is the admission webhook client config for path.
func (e Endpoint) admission(path string, ca []byte) admissionregistrationv1.WebhookClientConfig {
	if s := e.Service; s != nil {
		return admissionregistrationv1.WebhookClientConfig{CABundle: ca, Service: &admissionregistrationv1.ServiceReference{
			Namespace: s.Namespace, Name: s.Name, Path: ptr.To(path), Port: ptr.To(s.Port),
		}}
	}
	return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(e.URL + path), CABundle: ca}
}

// conversion is the CRD conversion webhook client config for path.
func (e Endpoint) conversion(path string, ca []byte) apiextv1.WebhookClientConfig {
	if s := e.Service; s != nil {
		return apiextv1.WebhookClientConfig{CABundle: ca, Service: &apiextv1.ServiceReference{
			Namespace: s.Namespace, Name: s.Name, Path: ptr.To(path), Port: ptr.To(s.Port),
		}}
	}
	return apiextv1.WebhookClientConfig{URL: ptr.To(e.URL + path), CABundle: ca}
}

// describe names where a client config points, for logs.
func describeAdmission(c admissionregistrationv1.WebhookClientConfig) string {
	switch {
	case c.Service != nil:
		return fmt.Sprintf("service %s/%s:%d%s", c.Service.Namespace, c.Service.Name, ptr.Deref(c.Service.Port, 443), ptr.Deref(c.Service.Path, ""))
	case c.URL != nil:
		return *c.URL
	}
	return "none"
}
