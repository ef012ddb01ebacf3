package addontemplate

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

func TestSpecEqual(t *testing.T) {
	spec := func(configs int, raws ...string) workv1.ManifestWorkSpec {
		s := workv1.ManifestWorkSpec{}
		for _, r := range raws {
			s.Workload.Manifests = append(s.Workload.Manifests, workv1.Manifest{})
			s.Workload.Manifests[len(s.Workload.Manifests)-1].Raw = []byte(r)
		}
		for range configs {
			s.ManifestConfigs = append(s.ManifestConfigs, workv1.ManifestConfigOption{ResourceIdentifier: workv1.ResourceIdentifier{Resource: "deployments", Name: "a"}})
		}
		return s
	}
	cases := map[string]struct {
		a, b workv1.ManifestWorkSpec
		want bool
	}{
		"same":                         {a: spec(1, `{"a":1,"b":"x"}`), b: spec(1, `{"a":1,"b":"x"}`), want: true},
		"other spacing and key order":  {a: spec(0, `{"a":1,"b":"x"}`), b: spec(0, "{ \"b\": \"x\",\n \"a\": 1 }"), want: true},
		"other value":                  {a: spec(0, `{"a":1}`), b: spec(0, `{"a":2}`)},
		"another manifest":             {a: spec(0, `{"a":1}`), b: spec(0, `{"a":1}`, `{}`)},
		"other manifest configuration": {a: spec(0, `{"a":1}`), b: spec(1, `{"a":1}`)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, specEqual(tc.a, tc.b)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
