// Package version holds Flotilla's version, set at build time by the Makefile with
// -ldflags "-X github.com/flotilla/flotilla/internal/version.Version=$(git describe --always --dirty)".
package version
