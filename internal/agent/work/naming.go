package work

import (
	"crypto/sha256"
	"fmt"
)

// HubHash identifies the hub an AppliedManifestWork came from, as OCM computes it: the hex
// SHA-256 of the hub API server's URL. Two hubs that deliver works to one spoke never share
// AppliedManifestWorks, even for works of the same name.
func HubHash(hubHost string) string {
	return fmt.Sprintf("%x", sha256.Sum256([]byte(hubHost)))
}

// AppliedName is the name of the AppliedManifestWork of a work on the spoke,
// `<hub-hash>-<work name>` as OCM names it.
func AppliedName(hubHash, work string) string { return hubHash + "-" + work }

// workOfApplied returns the work name of an AppliedManifestWork's name when it belongs to the
// same hub, and the whole name otherwise (a work of another hub).
func workOfApplied(hubHash, applied string) string {
	if len(applied) > len(hubHash)+1 && applied[:len(hubHash)+1] == hubHash+"-" {
		return applied[len(hubHash)+1:]
	}
	return applied
}
