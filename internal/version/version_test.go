package version

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRevisionFrom(t *testing.T) {
	cases := map[string]struct {
		settings []debug.BuildSetting
		want     string
	}{
		"no vcs info": {want: "unknown"},
		"clean checkout": {
			settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}},
			want:     "abc123",
		},
		"modified checkout": {
			settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}},
			want:     "abc123-dirty",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := revisionFrom(&debug.BuildInfo{Settings: tc.settings})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("revision (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStampedValuesWin(t *testing.T) {
	oldVersion, oldCommit, oldImage := Version, Commit, Image
	t.Cleanup(func() { Version, Commit, Image = oldVersion, oldCommit, oldImage })

	Version, Commit, Image = "v1.2.3", "", ""
	if diff := cmp.Diff("ghcr.io/flotilla/flotilla:v1.2.3", ImageRef()); diff != "" {
		t.Errorf("default image (-want +got):\n%s", diff)
	}
	Commit, Image = "0123abcd", "registry.example/fleet/flotilla:v1.2.3"
	got := []string{Revision(), ImageRef()}
	want := []string{"0123abcd", "registry.example/fleet/flotilla:v1.2.3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stamped commit and image (-want +got):\n%s", diff)
	}
}
