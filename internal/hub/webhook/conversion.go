package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla/flotilla/internal/hub/addonconversion"
)

// ConversionPath is where the hub serves the conversion webhook of the add-on CRDs.
const ConversionPath = "/convert"

// maxConversionBody bounds a ConversionReview: the API server converts a whole list in one
// review, so it is as large as the largest list of add-ons read at the other version.
const maxConversionBody = 64 << 20

// ConversionHandler answers the API server's ConversionReviews (apiextensions.k8s.io/v1) for
// ClusterManagementAddOn, ManagedClusterAddOn and AddOnDeploymentConfig between v1alpha1 and
// v1beta1 (package addonconversion). A review with an object it cannot convert fails as a
// whole, naming the object; the API server then fails the request that needed it.
func ConversionHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "a ConversionReview is POSTed", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxConversionBody+1))
		if err != nil {
			http.Error(w, fmt.Sprintf("reading the ConversionReview: %v", err), http.StatusBadRequest)
			return
		}
		if len(body) > maxConversionBody {
			http.Error(w, fmt.Sprintf("the ConversionReview is larger than %d bytes", maxConversionBody), http.StatusRequestEntityTooLarge)
			return
		}
		resp, err := Convert(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(resp)
	})
}

// Convert answers one ConversionReview (JSON) with a ConversionReview carrying the response. It
// fails only when the review cannot be read; an object that cannot be converted is a failed
// result in the response.
func Convert(review []byte) ([]byte, error) {
	var in apiextv1.ConversionReview
	if err := json.Unmarshal(review, &in); err != nil {
		return nil, fmt.Errorf("decoding the ConversionReview: %w", err)
	}
	if in.Request == nil {
		return nil, errors.New("the ConversionReview has no request")
	}
	out := apiextv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: apiextv1.SchemeGroupVersion.String(), Kind: "ConversionReview"},
		Response: convertAll(in.Request),
	}
	return json.Marshal(out)
}

func convertAll(req *apiextv1.ConversionRequest) *apiextv1.ConversionResponse {
	resp := &apiextv1.ConversionResponse{UID: req.UID}
	converted := make([]runtime.RawExtension, 0, len(req.Objects))
	for _, obj := range req.Objects {
		got, err := addonconversion.Convert(obj.Raw, req.DesiredAPIVersion)
		if err != nil {
			resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
			return resp
		}
		converted = append(converted, runtime.RawExtension{Raw: got})
	}
	resp.ConvertedObjects = converted
	resp.Result = metav1.Status{Status: metav1.StatusSuccess}
	return resp
}
