// Package version holds what a flotilla binary says about itself: its version, the commit it was
// built from and the image reference it is published under. The Makefile sets all three with
// -ldflags -X (see LDFLAGS there); a binary built without them reports "dev", the commit Go
// recorded in its build info, and the default image reference for its version.
package version
