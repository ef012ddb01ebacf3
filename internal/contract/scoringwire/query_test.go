package scoringwire

import (
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestQueryURL(t *testing.T) {
	now := time.Unix(1000, 0)
	got, err := QueryURL("http://prom:9090/api/v1/query_range", "avg(x)", now, 300, 30)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(got)
	want := url.Values{"query": {"avg(x)"}, "start": {"700"}, "end": {"1000"}, "step": {"30"}}
	if diff := cmp.Diff(want, u.Query()); diff != "" || u.Path != "/api/v1/query_range" {
		t.Errorf("query (-want +got):\n%s, path %q", diff, u.Path)
	}
	if _, err := QueryURL("prom:9090", "x", now, 1, 1); err == nil {
		t.Error("a host without scheme: no error")
	}
}
