package fleet

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"strings"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

//go:embed default.yaml
var defaultFleet []byte

// DefaultYAML is the default fleet file.
func DefaultYAML() []byte { return defaultFleet }

// Default returns the default fleet.
func Default() *Fleet {
	f, err := Parse("default fleet", defaultFleet)
	if err != nil {
		panic(err) // a test parses it; this cannot fail in a built binary
	}
	return f
}

// Load reads and checks a fleet file.
func Load(path string) (*Fleet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading fleet file: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes a fleet file strictly (an unknown or misspelled field is an error) and checks it.
// source names the file in errors.
func Parse(source string, data []byte) (*Fleet, error) {
	// Decode as the API server does: field names are case-sensitive, unknown and duplicate
	// fields are errors.
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("fleet file %s is not a valid fleet: %w", source, err)
	}
	var f Fleet
	strictErrs, err := kjson.UnmarshalStrict(js, &f, kjson.DisallowUnknownFields)
	if err != nil {
		hint := ""
		if strings.Contains(err.Error(), "unmarshal bool into") {
			hint = ` (YAML reads unquoted yes, no, on, off, y and n as booleans: quote the value, "on")`
		}
		return nil, fmt.Errorf("fleet file %s is not a valid fleet: %w%s", source, err, hint)
	}
	if len(strictErrs) > 0 {
		return nil, fmt.Errorf("fleet file %s is not a valid fleet: %w", source, errors.Join(strictErrs...))
	}
	if errs := f.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("fleet file %s is invalid: %w", source, errs.ToAggregate())
	}
	return &f, nil
}
