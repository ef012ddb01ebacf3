package fleet

import (
	"testing"
)

// FuzzParse feeds the fleet-file parser arbitrary bytes, as a user's hand-written fleet file may
// hold. It must never panic, and a fleet it accepts must be valid.
func FuzzParse(f *testing.F) {
	f.Add(DefaultYAML())
	for _, seed := range []string{
		"",
		"clusters: []",
		"clusters:\n- name: hub\n  role: hub\n",
		"clusters:\n- name: on\n",
		"clusters:\n- {name: a, nodes: [{count: -1}]}\n",
		"clusters: [{name: a, name: b}]",
		"\t- :",
		"a: &a [*a]",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Parse("fuzz.yaml", data)
		if err != nil {
			if got != nil {
				t.Fatalf("Parse returned both a fleet and an error: %v", err)
			}
			return
		}
		if errs := got.Validate(); len(errs) > 0 {
			t.Fatalf("Parse accepted a fleet that Validate refuses: %v", errs.ToAggregate())
		}
	})
}
