package addonconversion

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/flotilla/flotilla/api/addon/v1beta1"
)

// AnnotationPrefix starts the annotations in which a converted object carries what the other
// version holds and this one cannot (see the package documentation).
const AnnotationPrefix = "conversion.flotilla.io/"

// InstallNamespaceAnnotation holds a v1alpha1 ManagedClusterAddOn's spec.installNamespace in
// v1beta1, where the field does not exist. The key is OCM's, which OCM's add-on framework reads.
const InstallNamespaceAnnotation = v1beta1.InstallNamespaceAnnotation

// Annotations that carry the fields of one version through the other.
const (
	// v1alpha1 ClusterManagementAddOn spec.addOnConfiguration and ManagedClusterAddOn
	// status.addOnConfiguration, as JSON.
	AlphaAddOnConfigurationAnnotation = AnnotationPrefix + "v1alpha1-addon-configuration"
	// v1alpha1 ClusterManagementAddOn spec.supportedConfigs, as JSON, when defaultConfigs cannot
	// say them.
	AlphaSupportedConfigsAnnotation = AnnotationPrefix + "v1alpha1-supported-configs"
	// v1beta1 ClusterManagementAddOn spec.defaultConfigs, as JSON, when supportedConfigs cannot
	// say them.
	BetaDefaultConfigsAnnotation = AnnotationPrefix + "v1beta1-default-configs"
	// v1alpha1 ManagedClusterAddOn spec.installNamespace and its own InstallNamespaceAnnotation,
	// as JSON, when InstallNamespaceAnnotation on the v1beta1 object cannot say them.
	AlphaInstallNamespaceAnnotation = AnnotationPrefix + "v1alpha1-install-namespace"
	// v1beta1 ManagedClusterAddOn InstallNamespaceAnnotation, as JSON, when spec.installNamespace
	// cannot say it (it is empty).
	BetaInstallNamespaceAnnotation = AnnotationPrefix + "v1beta1-install-namespace"
	// v1alpha1 ManagedClusterAddOn status.registrations and status.kubeClientDriver, as JSON,
	// when the v1beta1 registrations cannot say them.
	AlphaRegistrationsAnnotation = AnnotationPrefix + "v1alpha1-registrations"
	// v1beta1 ManagedClusterAddOn status.registrations, as JSON, when the v1alpha1 ones cannot
	// say them.
	BetaRegistrationsAnnotation = AnnotationPrefix + "v1beta1-registrations"
	// v1alpha1 ManagedClusterAddOn status.configReferences, as JSON, when the v1beta1 ones cannot
	// say them.
	AlphaConfigReferencesAnnotation = AnnotationPrefix + "v1alpha1-config-references"
	// v1beta1 ManagedClusterAddOn status.configReferences, as JSON, when the v1alpha1 ones cannot
	// say them.
	BetaConfigReferencesAnnotation = AnnotationPrefix + "v1beta1-config-references"
)

// annotations is the converted object's annotations: the source's, less the conversion's own
// (which describe the source's counterpart in the other version and are read through in) and
// the other keys the conversion of the kind owns (OCM's install namespace key).
type annotations struct {
	in  map[string]string
	out map[string]string
}

func newAnnotations(in map[string]string, owned ...string) *annotations {
	out := maps.Clone(in)
	for k := range out {
		if strings.HasPrefix(k, AnnotationPrefix) || slices.Contains(owned, k) {
			delete(out, k)
		}
	}
	return &annotations{in: in, out: out}
}

func (a *annotations) set(k, v string) {
	if a.out == nil {
		a.out = map[string]string{}
	}
	a.out[k] = v
}

// result is the converted object's annotations, nil when there are none.
func (a *annotations) result() map[string]string {
	if len(a.out) == 0 {
		return nil
	}
	return a.out
}

// park records v under key when it is not the zero value, and says whether it did.
func park[V any](a *annotations, key string, v V) error {
	var zero V
	if equalJSON(v, zero) {
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	a.set(key, string(data))
	return nil
}

// unpark is the value parked under key on the source object, or the zero value when there is
// none or it does not parse (an annotation someone edited by hand is ignored, not an error:
// the object must stay readable).
func unpark[V any](a *annotations, key string) V {
	var v V
	data, ok := a.in[key]
	if !ok {
		return v
	}
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		var zero V
		return zero
	}
	return v
}

// carry converts v, a field the two versions shape differently, losing nothing. The result is
// the original parked under fromKey on the source object when there is one and it still
// converts back to v (it was parked when the object was converted to this version, and no one
// changed the field since), else conv(v). When back(result) is not v, v is parked under toKey on
// the converted object, so that the conversion back restores it.
func carry[V, W any](a *annotations, fromKey, toKey string, v V, conv func(V) W, back func(W) V) (W, error) {
	out := conv(v)
	if _, ok := a.in[fromKey]; ok {
		if parked := unpark[W](a, fromKey); equalJSON(back(parked), v) {
			out = parked
		}
	}
	if !equalJSON(back(out), v) {
		data, err := json.Marshal(v)
		if err != nil {
			return out, err
		}
		a.set(toKey, string(data))
	}
	return out, nil
}

// equalJSON says whether a and b are the same on the wire, where an empty list and no list are
// the same (the types omit both).
func equalJSON(a, b any) bool {
	na, errA := normalJSON(a)
	nb, errB := normalJSON(b)
	return errA == nil && errB == nil && reflect.DeepEqual(na, nb)
}

func normalJSON(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return dropEmptyLists(out), nil
}

func dropEmptyLists(v any) any {
	switch t := v.(type) {
	case []any:
		if len(t) == 0 {
			return nil
		}
		for i := range t {
			t[i] = dropEmptyLists(t[i])
		}
	case map[string]any:
		for k, e := range t {
			if t[k] = dropEmptyLists(e); t[k] == nil {
				delete(t, k)
			}
		}
	}
	return v
}

// recast copies in into a value of type T with the same JSON shape (a type of the other version
// with the same schema).
func recast[T any](in any) (T, error) {
	var out T
	data, err := json.Marshal(in)
	if err != nil {
		return out, err
	}
	err = json.Unmarshal(data, &out)
	return out, err
}
