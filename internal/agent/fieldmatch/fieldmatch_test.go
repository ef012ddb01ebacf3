package fieldmatch

import "testing"

func TestScalarEqual(t *testing.T) {
	cases := map[string]struct {
		have, want any
		equal      bool
	}{
		"ints and floats":                 {have: float64(3), want: int64(3), equal: true},
		"a count written as a number":     {have: "8", want: int64(8), equal: true},
		"canonical millicores":            {have: "1", want: "1000m", equal: true},
		"canonical memory":                {have: "512Mi", want: "0.5Gi", equal: true},
		"different quantities":            {have: "1Gi", want: "512Mi"},
		"strings that are not quantities": {have: "Container", want: "Container", equal: true},
		"different strings":               {have: "Pod", want: "Container"},
		"a bool and a string":             {have: "true", want: true},
		"a number and a word":             {have: "many", want: int64(3)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ScalarEqual(tc.have, tc.want); got != tc.equal {
				t.Errorf("ScalarEqual(%v, %v) = %v, want %v", tc.have, tc.want, got, tc.equal)
			}
		})
	}
}
