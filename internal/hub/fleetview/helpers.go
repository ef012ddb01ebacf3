package fleetview

import (
	"strconv"
	"strings"

	"github.com/flotilla/flotilla/internal/hub/workreplicaset"
)

// WorkReplicaSet names the ManifestWorkReplicaSet that made a ManifestWork, as NAMESPACE/NAME,
// from the label the set's controller puts on it (whose value is NAMESPACE.NAME; a namespace has
// no dots); "" when the work has no such label.
func WorkReplicaSet(labels map[string]string) string {
	v := labels[workreplicaset.SetLabel]
	if ns, name, ok := strings.Cut(v, "."); ok && ns != "" && name != "" {
		return ns + "/" + name
	}
	return v
}

// plural is "1 cluster has" or "3 clusters have".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// plural2 is one when n is 1, else many.
func plural2(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
