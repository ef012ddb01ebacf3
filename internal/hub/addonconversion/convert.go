package addonconversion

import (
	"encoding/json"
	"fmt"

	"github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/api/addon/v1beta1"
)

// Versions the conversion knows, as apiVersion values.
var (
	V1alpha1 = v1alpha1.GroupVersion.String()
	V1beta1  = v1beta1.GroupVersion.String()
)

// Kinds are the kinds served at both versions, which Convert converts.
var Kinds = []string{"ClusterManagementAddOn", "ManagedClusterAddOn", "AddOnDeploymentConfig"}

// header is what Convert reads of an object before it knows its type.
type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"metadata"`
}

// ObjectName is how errors name obj: its kind and namespace/name, or its raw start when it is
// not an object.
func ObjectName(obj []byte) string {
	var h header
	if err := json.Unmarshal(obj, &h); err != nil {
		const max = 80
		if len(obj) > max {
			obj = obj[:max]
		}
		return fmt.Sprintf("object %q", obj)
	}
	name := h.Metadata.Name
	if h.Metadata.Namespace != "" {
		name = h.Metadata.Namespace + "/" + name
	}
	return fmt.Sprintf("%s %s (%s)", h.Kind, name, h.APIVersion)
}

// Convert converts obj, one object as JSON, to the version desiredAPIVersion
// (addon.open-cluster-management.io/v1alpha1 or /v1beta1) and returns it as JSON. An object
// already at that version comes back unchanged.
func Convert(obj []byte, desiredAPIVersion string) ([]byte, error) {
	var h header
	if err := json.Unmarshal(obj, &h); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object: %w", ObjectName(obj), err)
	}
	known := func(v string) bool { return v == V1alpha1 || v == V1beta1 }
	if !known(h.APIVersion) || !known(desiredAPIVersion) {
		return nil, fmt.Errorf("%s: cannot convert from %q to %q: the hub converts between %s and %s only",
			ObjectName(obj), h.APIVersion, desiredAPIVersion, V1alpha1, V1beta1)
	}
	if h.APIVersion == desiredAPIVersion {
		return obj, nil
	}
	toBeta := desiredAPIVersion == V1beta1
	switch h.Kind {
	case "ClusterManagementAddOn":
		if toBeta {
			return via(obj, ClusterManagementAddOnToV1beta1)
		}
		return via(obj, ClusterManagementAddOnToV1alpha1)
	case "ManagedClusterAddOn":
		if toBeta {
			return via(obj, ManagedClusterAddOnToV1beta1)
		}
		return via(obj, ManagedClusterAddOnToV1alpha1)
	case "AddOnDeploymentConfig":
		if toBeta {
			return via(obj, AddOnDeploymentConfigToV1beta1)
		}
		return via(obj, AddOnDeploymentConfigToV1alpha1)
	}
	return nil, fmt.Errorf("%s: cannot convert kind %q: the hub converts %v only", ObjectName(obj), h.Kind, Kinds)
}

// via decodes obj as In, converts it with conv and encodes the result.
func via[In, Out any](obj []byte, conv func(*In) (*Out, error)) ([]byte, error) {
	in := new(In)
	if err := json.Unmarshal(obj, in); err != nil {
		return nil, fmt.Errorf("%s: %w", ObjectName(obj), err)
	}
	out, err := conv(in)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}
