package flowerfront

import (
	"net/url"
	"path"
	"strings"
	"testing"
)

// FuzzClassify: a path the front forwards means the same to any reader: unescaping and cleaning
// leave it as it is, so the SuperLink routes it where the front matched it; and it is a Control
// path exactly when it is under /v1/control/.
func FuzzClassify(f *testing.F) {
	for _, p := range []string{
		"/health", "/v1/fleet/pull-messages", "/v1/runtime/acquire-task", "/v1/control/list-runs",
		"/v1/fleet/../control/list-runs", "/v1/control%2Flist-runs", "/v1/fleet//x", "/v1/fleet/x/",
		`/v1/fleet\..\control`, "/v1/%63ontrol/x", "", "*", "/",
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		r := classify(p)
		if r == routeBadPath || r == routeNotFound {
			return
		}
		if u, err := url.PathUnescape(p); err != nil || u != p {
			t.Errorf("classify(%q) = %d, but the SuperLink would unescape it to %q (%v)", p, r, u, err)
		}
		if c := path.Clean(p); c != p {
			t.Errorf("classify(%q) = %d, but it cleans to %q", p, r, c)
		}
		if (r == routeControl) != strings.HasPrefix(p, controlPrefix) {
			t.Errorf("classify(%q) = %d, but under %s is %v", p, r, controlPrefix, strings.HasPrefix(p, controlPrefix))
		}
		if r == routeOpen && p != healthPath && !strings.HasPrefix(p, fleetPrefix) && !strings.HasPrefix(p, runtimePrefix) {
			t.Errorf("classify(%q) forwards a path outside the Fleet and Runtime APIs", p)
		}
	})
}
