// Package version holds Flotilla's version, set at build time by the Makefile with
// -ldflags "-X github.com/flotilla/flotilla/internal/version.Version=$(git describe --always --dirty)".
package version

// Version is the release or commit this binary was built from; "dev" when built without ldflags.
var Version = "dev"
