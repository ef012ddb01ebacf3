package version

import "runtime/debug"

// DefaultRepository is where Flotilla's images are published; Image defaults to it, tagged with
// Version.
const DefaultRepository = "ghcr.io/flotilla/flotilla"

// These are set at build time with -ldflags "-X github.com/flotilla/flotilla/internal/version.<Name>=...";
// -X sets only plain string variables, so the defaults for unset ones are worked out by the functions
// below rather than here.
var (
	// Version is the release or `git describe` of the commit this binary was built from; "dev" when
	// built without ldflags.
	Version = "dev"
	// Commit is the full commit hash; empty when built without ldflags (see Revision).
	Commit = ""
	// Image is the image reference this binary is published under; empty when built without ldflags
	// (see ImageRef).
	Image = ""
)

// Revision is Commit, or else the commit Go stamped into the build info (go build in a git
// checkout records vcs.revision), or "unknown".
func Revision() string {
	if Commit != "" {
		return Commit
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		return revisionFrom(info)
	}
	return "unknown"
}

func revisionFrom(info *debug.BuildInfo) string {
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	switch {
	case rev == "":
		return "unknown"
	case dirty:
		return rev + "-dirty"
	default:
		return rev
	}
}

// ImageRef is Image, or else DefaultRepository tagged with Version.
func ImageRef() string {
	if Image != "" {
		return Image
	}
	return DefaultRepository + ":" + Version
}
