package explain

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
)

// maxBody bounds a POSTed body.
const maxBody = 1 << 20

// decodePlacement reads the Placement a what-if POSTs (JSON or YAML) strictly, as the API server
// would: apiVersion cluster.open-cluster-management.io/v1beta1 and kind Placement, no unknown or
// duplicate fields, the right types, and metadata.namespace, when set, that of the path. The
// error names the field and the fix.
func decodePlacement(r *http.Request, ns string) (*clusterv1beta1.Placement, error) {
	data, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, errBodyTooLarge
		}
		return nil, fmt.Errorf("reading the body: %w", err)
	}
	return decodeBody(data, ns)
}

func decodeBody(data []byte, ns string) (*clusterv1beta1.Placement, error) {
	const want = "send one Placement (apiVersion: " + Group + "/v1beta1, kind: Placement) as JSON or YAML"
	if strings.TrimSpace(string(data)) == "" {
		return nil, errors.New("the body is empty: " + want)
	}
	// JSON is decoded as it is, so that a duplicate field is named by its path.
	js := data
	if !strings.HasPrefix(strings.TrimSpace(string(data)), "{") {
		var err error
		if js, err = yaml.YAMLToJSONStrict(data); err != nil {
			return nil, fmt.Errorf("the body is neither JSON nor YAML (%v): %s", err, want)
		}
	}
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(js, &tm); err != nil {
		return nil, fmt.Errorf("the body is not an object (%v): %s", err, want)
	}
	gv := clusterv1beta1.GroupVersion.String()
	if tm.APIVersion != gv || tm.Kind != "Placement" {
		return nil, fmt.Errorf("apiVersion %q, kind %q: want apiVersion %q, kind \"Placement\"", tm.APIVersion, tm.Kind, gv)
	}
	p := &clusterv1beta1.Placement{}
	strictErrs, err := kjson.UnmarshalStrict(js, p, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
	if err == nil && len(strictErrs) > 0 {
		err = errors.Join(strictErrs...)
	}
	if err != nil {
		return nil, fmt.Errorf("the body's Placement: %w; fix or remove that field", err)
	}
	switch p.Namespace {
	case "":
		p.Namespace = ns
	case ns:
	default:
		return nil, fmt.Errorf("placement %q: metadata.namespace %q differs from the path's namespace %q: POST it to %s%s/placements, or drop metadata.namespace",
			p.Name, p.Namespace, ns, PathPrefix, p.Namespace)
	}
	return p, nil
}

// DecodePlacement decodes a what-if Placement (JSON or YAML) for namespace ns strictly, as a POST
// to the explanation endpoint is decoded; `flotilla dashboard`'s what-if reads its body with it.
func DecodePlacement(data []byte, ns string) (*clusterv1beta1.Placement, error) {
	if len(data) > maxBody {
		return nil, errBodyTooLarge
	}
	return decodeBody(data, ns)
}
