package procruntime

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "alpha", "B": "$(A)", "EMPTY": ""}
	cases := map[string]struct{ in, want string }{
		"plain":                 {in: "no refs", want: "no refs"},
		"reference":             {in: "x-$(A)-y", want: "x-alpha-y"},
		"two references":        {in: "$(A)$(A)", want: "alphaalpha"},
		"undefined stays":       {in: "$(NOPE) $(A)", want: "$(NOPE) alpha"},
		"empty value":           {in: "[$(EMPTY)]", want: "[]"},
		"value not re-expanded": {in: "$(B)", want: "$(A)"},
		"escaped operator":      {in: "$$", want: "$"},
		"escaped reference":     {in: "$$(A)", want: "$(A)"},
		"escape then ref":       {in: "$$$(A)", want: "$alpha"},
		"lone dollar":           {in: "cost: $5", want: "cost: $5"},
		"trailing dollar":       {in: "end$", want: "end$"},
		"unclosed reference":    {in: "$(A", want: "$(A"},
		"unclosed then ref":     {in: "$($(A)", want: "$($(A)"},
		"multi-byte after $":    {in: "$é$(A)", want: "$éalpha"},
		"empty name":            {in: "$()", want: "$()"},
		"shell syntax kept":     {in: "${A} $A", want: "${A} $A"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, expand(tc.in, lookupIn(vars))); diff != "" {
				t.Errorf("expand(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}
