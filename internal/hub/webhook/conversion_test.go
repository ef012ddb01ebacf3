package webhook

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flotilla/flotilla/internal/hub/addonconversion"
)

const (
	alphaMCA = `{"apiVersion":"addon.open-cluster-management.io/v1alpha1","kind":"ManagedClusterAddOn",` +
		`"metadata":{"namespace":"c1","name":"gpu"},"spec":{"installNamespace":"addons"},` +
		`"status":{"registrations":[{"signerName":"kubernetes.io/kube-apiserver-client","subject":{"user":"u"}}],"kubeClientDriver":"csr"}}`
	alphaCMA = `{"apiVersion":"addon.open-cluster-management.io/v1alpha1","kind":"ClusterManagementAddOn",` +
		`"metadata":{"name":"gpu"},"spec":{"supportedConfigs":[{"group":"g","resource":"r"}]}}`
)

func conversionReview(desired string, objs ...string) []byte {
	r := apiextv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
		Request:  &apiextv1.ConversionRequest{UID: types.UID("uid-1"), DesiredAPIVersion: desired},
	}
	for _, o := range objs {
		r.Request.Objects = append(r.Request.Objects, runtime.RawExtension{Raw: []byte(o)})
	}
	data, _ := json.Marshal(r)
	return data
}

func post(t *testing.T, srv *httptest.Server, method string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+ConversionPath, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// TestConversionHandler: the handler decodes a ConversionReview, converts every object with
// addonconversion, and answers with the request's UID; an object it cannot convert fails the
// review with a message naming the object.
func TestConversionHandler(t *testing.T) {
	srv := httptest.NewServer(ConversionHandler())
	defer srv.Close()
	converted := func(obj, to string) runtime.RawExtension {
		got, err := addonconversion.Convert([]byte(obj), to)
		if err != nil {
			t.Fatal(err)
		}
		return runtime.RawExtension{Raw: got}
	}
	cases := map[string]struct {
		body        []byte
		wantResult  metav1.Status
		wantObjects []runtime.RawExtension
	}{
		"both kinds to v1beta1": {
			body:        conversionReview(addonconversion.V1beta1, alphaMCA, alphaCMA),
			wantResult:  metav1.Status{Status: metav1.StatusSuccess},
			wantObjects: []runtime.RawExtension{converted(alphaMCA, addonconversion.V1beta1), converted(alphaCMA, addonconversion.V1beta1)},
		},
		"an unknown kind fails the review, naming the object": {
			body: conversionReview(addonconversion.V1beta1, alphaMCA,
				`{"apiVersion":"addon.open-cluster-management.io/v1alpha1","kind":"AddOnTemplate","metadata":{"name":"tmpl"}}`),
			wantResult: metav1.Status{Status: metav1.StatusFailure, Message: `AddOnTemplate tmpl (addon.open-cluster-management.io/v1alpha1): ` +
				`cannot convert kind "AddOnTemplate": the hub converts [ClusterManagementAddOn ManagedClusterAddOn AddOnDeploymentConfig] only`},
		},
		"an unknown version fails the review, naming the object": {
			body: conversionReview("addon.open-cluster-management.io/v2", alphaMCA),
			wantResult: metav1.Status{Status: metav1.StatusFailure, Message: `ManagedClusterAddOn c1/gpu (addon.open-cluster-management.io/v1alpha1): ` +
				`cannot convert from "addon.open-cluster-management.io/v1alpha1" to "addon.open-cluster-management.io/v2": ` +
				`the hub converts between addon.open-cluster-management.io/v1alpha1 and addon.open-cluster-management.io/v1beta1 only`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, body := post(t, srv, http.MethodPost, tc.body)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			var got apiextv1.ConversionReview
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if got.APIVersion != "apiextensions.k8s.io/v1" || got.Kind != "ConversionReview" || got.Response == nil {
				t.Fatalf("not a ConversionReview response: %s", body)
			}
			if got.Response.UID != "uid-1" {
				t.Errorf("response UID %q, want uid-1", got.Response.UID)
			}
			if diff := cmp.Diff(tc.wantResult, got.Response.Result); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantObjects, got.Response.ConvertedObjects); diff != "" {
				t.Errorf("converted objects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConversionHandlerRefusesBadRequests(t *testing.T) {
	srv := httptest.NewServer(ConversionHandler())
	defer srv.Close()
	cases := map[string]struct {
		method   string
		body     []byte
		wantCode int
		wantText string
	}{
		"not POST":   {method: http.MethodGet, wantCode: http.StatusMethodNotAllowed, wantText: "POST"},
		"not JSON":   {method: http.MethodPost, body: []byte("{"), wantCode: http.StatusBadRequest, wantText: "decoding the ConversionReview"},
		"no request": {method: http.MethodPost, body: []byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}`), wantCode: http.StatusBadRequest, wantText: "no request"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, body := post(t, srv, tc.method, tc.body)
			if code != tc.wantCode || !strings.Contains(string(body), tc.wantText) {
				t.Errorf("got %d %q, want %d saying %q", code, body, tc.wantCode, tc.wantText)
			}
		})
	}
}
