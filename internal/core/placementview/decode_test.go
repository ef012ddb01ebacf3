package placementview

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitDocuments(t *testing.T) {
	type doc struct {
		Number, Line int
		Data         string
	}
	cases := map[string]struct {
		in   string
		want []doc
	}{
		"one document": {
			in:   "a: 1\n",
			want: []doc{{1, 1, "a: 1\n"}},
		},
		"a leading separator starts no empty document": {
			in:   "---\na: 1\n---\nb: 2\n",
			want: []doc{{1, 2, "a: 1\n"}, {2, 4, "b: 2\n"}},
		},
		"a comment before the first separator is document 1": {
			in:   "# fleet\n---\na: 1\n",
			want: []doc{{1, 1, "# fleet\n"}, {2, 3, "a: 1\n"}},
		},
		"separators with comments and trailing blanks; an empty document counts": {
			in:   "a: 1\n--- # two\n---  \nc: 3\n",
			want: []doc{{1, 1, "a: 1\n"}, {2, 3, ""}, {3, 4, "c: 3\n"}},
		},
		"--- inside a value is no separator": {
			in:   "a: |\n  ---x\nb: ---\n",
			want: []doc{{1, 1, "a: |\n  ---x\nb: ---\n"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []doc
			for _, d := range splitDocuments([]byte(tc.in)) {
				got = append(got, doc{d.number, d.line, string(d.data)})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("splitDocuments (-want +got):\n%s", diff)
			}
		})
	}
}
