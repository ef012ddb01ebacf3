// Package version holds Flotilla's version, set at build time with
// -ldflags "-X github.com/flotilla/flotilla/internal/version.Version=v0.1.0".
package version

import "runtime/debug"

// Version is the release this binary was built from; "dev" for local builds.
var Version = "dev"

// Commit returns the VCS revision the binary was built from, if the Go toolchain recorded one.
func Commit() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}
