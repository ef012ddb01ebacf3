package chartflags

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValues(t *testing.T) {
	cases := map[string]struct {
		flags   Flags
		want    map[string]any
		wantErr string
	}{
		"image with a registry port": {flags: Flags{Image: "localhost:5000/flotilla:v1", PullPolicy: "Never"},
			want: map[string]any{"image": map[string]any{"repository": "localhost:5000/flotilla", "tag": "v1", "pullPolicy": "Never"}}},
		"image without tag": {flags: Flags{Image: "localhost:5000/flotilla"},
			want: map[string]any{"image": map[string]any{"repository": "localhost:5000/flotilla"}}},
		"set wins": {flags: Flags{Sets: []string{"replicas=3", "image.pullPolicy=Always"}, PullPolicy: "Never"},
			want: map[string]any{"replicas": int64(3), "image": map[string]any{"pullPolicy": "Always"}}},
		"bad set": {flags: Flags{Sets: []string{"replicas"}}, wantErr: `--set "replicas"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := tc.flags.Values(nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
