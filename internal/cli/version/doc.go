// Package version is the `flotilla version` command.
package version
