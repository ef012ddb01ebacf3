package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/flotilla/flotilla/api/scheme"
)

// fuzzAuthorizer grants every permission to one user, fails for another, and refuses the rest:
// the three answers a SubjectAccessReview can give.
func fuzzAuthorizer(_ context.Context, user authenticationv1.UserInfo, _ Permission) (bool, error) {
	switch user.Username {
	case "admin":
		return true, nil
	case "broken":
		return false, errors.New("the API server did not answer")
	}
	return false, nil
}

// fuzzHandlers are every admission handler the hub serves.
func fuzzHandlers(s *runtime.Scheme) map[string]admission.Handler {
	return map[string]admission.Handler{
		ManagedClusterPath: clusterHandler(s, fuzzAuthorizer),
		BindingPath:        BindingHandler(s, fuzzAuthorizer),
		"/validate-works":  ManifestWorkHandler(s, fuzzAuthorizer),
		"/validate-fl":     FederatedLearningHandler(s, fuzzAuthorizer),
		"/validate-msa": ManagedServiceAccountHandler(s, func(_ context.Context, name string) (bool, error) {
			if name == "broken" {
				return false, errors.New("the API server did not answer")
			}
			return name == "gpu-east", nil
		}),
	}
}

// FuzzAdmissionReview posts arbitrary AdmissionReview bodies to every admission handler, as
// the API server relays them with objects any hub user or agent wrote. A handler must never
// panic and must always answer with an AdmissionReview whose response is either allowed or
// carries a reason.
func FuzzAdmissionReview(f *testing.F) {
	s := scheme.Scheme
	cluster := `{"apiVersion":"cluster.open-cluster-management.io/v1","kind":"ManagedCluster","metadata":{"name":"gpu-east","labels":{"cluster.open-cluster-management.io/clusterset":"team"}},"spec":{"hubAcceptsClient":true,"taints":[{"key":"k","effect":"NoSelect"}]}}`
	binding := `{"apiVersion":"cluster.open-cluster-management.io/v1beta2","kind":"ManagedClusterSetBinding","metadata":{"name":"team","namespace":"ns"},"spec":{"clusterSet":"team"}}`
	work := `{"apiVersion":"work.open-cluster-management.io/v1","kind":"ManifestWork","metadata":{"name":"w","namespace":"gpu-east"},"spec":{"executor":{"subject":{"type":"ServiceAccount","serviceAccount":{"namespace":"a","name":"b"}}}}}`
	claimed := `{"apiVersion":"cluster.open-cluster-management.io/v1","kind":"ManagedCluster","metadata":{"name":"gpu-east"},"status":{"clusterClaims":[{"name":"a","value":"1"},{"name":"a","value":"2"}]}}`
	fl := `{"apiVersion":"federation-ai.open-cluster-management.io/v1alpha1","kind":"FederatedLearning","metadata":{"name":"m","namespace":"ns"},"spec":{"framework":"flower","server":{"image":"s"},"client":{"image":"c","placement":{"clusterSets":["a","b","a"]}}}}`
	msa := `{"apiVersion":"authentication.open-cluster-management.io/v1beta1","kind":"ManagedServiceAccount","metadata":{"name":"argocd","namespace":"gpu-east"},"spec":{"rotation":{"validity":"24h"},"ttlSecondsAfterCreation":5}}`
	for _, obj := range []string{cluster, claimed, binding, work, fl, msa, `{}`, `null`, `{"metadata":7}`} {
		for _, op := range []admissionv1.Operation{admissionv1.Create, admissionv1.Update, admissionv1.Delete} {
			for _, user := range []string{"admin", "broken", "system:open-cluster-management:gpu-east:agent"} {
				review := admissionv1.AdmissionReview{Request: &admissionv1.AdmissionRequest{
					UID: "1", Operation: op, Object: runtime.RawExtension{Raw: []byte(obj)}, OldObject: runtime.RawExtension{Raw: []byte(cluster)},
					UserInfo: authenticationv1.UserInfo{Username: user, Groups: []string{"system:open-cluster-management:gpu-east"}},
				}}
				review.APIVersion, review.Kind = "admission.k8s.io/v1", "AdmissionReview"
				b, err := json.Marshal(review)
				if err != nil {
					f.Fatal(err)
				}
				f.Add(b)
			}
		}
	}
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`))
	f.Add([]byte(`not json`))
	handlers := fuzzHandlers(s)
	f.Fuzz(func(t *testing.T, body []byte) {
		for path, h := range handlers {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			(&admission.Webhook{Handler: h}).ServeHTTP(rec, req)
			var out admissionv1.AdmissionReview
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
				t.Fatalf("%s answered %d with no AdmissionReview (%v): %s", path, rec.Code, err, rec.Body.String())
			}
			if r := out.Response; !r.Allowed && (r.Result == nil || r.Result.Message == "") {
				t.Fatalf("%s refused without a reason: %+v", path, r)
			}
		}
	})
}

// FuzzConvert feeds the conversion webhook arbitrary ConversionReviews. It must never panic, and
// a review it answers must be a ConversionReview with a response.
func FuzzConvert(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"1","desiredAPIVersion":"addon.open-cluster-management.io/v1beta1","objects":[{"apiVersion":"addon.open-cluster-management.io/v1alpha1","kind":"ManagedClusterAddOn","metadata":{"name":"a","namespace":"c"},"spec":{"installNamespace":"x"}}]}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"1","desiredAPIVersion":"addon.open-cluster-management.io/v1alpha1","objects":[{"apiVersion":"addon.open-cluster-management.io/v1beta1","kind":"ClusterManagementAddOn","metadata":{"name":"a"},"spec":{"installStrategy":{"type":"Placements","placements":[{"name":"p","namespace":"n"}]}}}]}}`,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"1","desiredAPIVersion":"addon.open-cluster-management.io/v1beta1","objects":[{"apiVersion":"addon.open-cluster-management.io/v1alpha1","kind":"AddOnDeploymentConfig","metadata":{"name":"a","namespace":"c"},"spec":{"customizedVariables":[{"name":"A","value":"b"}]}}]}}`,
		`{"request":{"objects":[{"kind":"Nope"}]}}`,
		`{"request":{"desiredAPIVersion":"x/y/z","objects":[null]}}`,
		`{}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, review []byte) {
		out, err := Convert(review)
		if err != nil {
			return
		}
		var got struct {
			Response *json.RawMessage `json:"response"`
		}
		if err := json.Unmarshal(out, &got); err != nil || got.Response == nil {
			t.Fatalf("Convert answered without a response (%v): %s", err, out)
		}
	})
}
