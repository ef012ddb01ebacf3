package v1

import (
	"encoding/json"
	"reflect"
)

// SameSpec says whether two ManifestWork specs say the same, compared as JSON values: the API
// server gives a manifest back with its keys in its own order, which is no change.
func SameSpec(a, b *ManifestWorkSpec) bool {
	va, errA := jsonValue(a)
	vb, errB := jsonValue(b)
	return errA == nil && errB == nil && reflect.DeepEqual(va, vb)
}

func jsonValue(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(raw, &out)
}
