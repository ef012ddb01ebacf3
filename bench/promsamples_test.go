//go:build integration

package bench

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The three readers of /metrics share one parser: labeled samples only, comments and unlabeled
// samples skipped, a missing apiserver_request_total an error.
func TestPromSamples(t *testing.T) {
	const exposition = `# HELP apiserver_request_total Counter of apiserver requests.
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",resource="pods",verb="POST",version="v1"} 7
apiserver_request_total{code="200",resource="pods",subresource="status",verb="PATCH"} 3
apiserver_request_total{code="200",resource="pods",verb="LIST"} 40
controller_runtime_reconcile_total{controller="addon",result="error"} 2
process_cpu_seconds_total 12.5
`
	type sample struct {
		Name   string
		Labels map[string]string
		V      float64
	}
	var got []sample
	if err := promSamples(strings.NewReader(exposition), func(name string, l map[string]string, v float64) {
		got = append(got, sample{name, map[string]string{"verb": l["verb"], "controller": l["controller"]}, v})
	}); err != nil {
		t.Fatal(err)
	}
	want := []sample{
		{"apiserver_request_total", map[string]string{"verb": "POST", "controller": ""}, 7},
		{"apiserver_request_total", map[string]string{"verb": "PATCH", "controller": ""}, 3},
		{"apiserver_request_total", map[string]string{"verb": "LIST", "controller": ""}, 40},
		{"controller_runtime_reconcile_total", map[string]string{"verb": "", "controller": "addon"}, 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
	if n, err := mutatingRequests([]byte(exposition)); err != nil || n != 10 {
		t.Errorf("mutatingRequests = %v, %v; want 10 (POST and PATCH)", n, err)
	}
	if _, err := mutatingRequests([]byte("process_cpu_seconds_total 1\n")); err == nil {
		t.Error("mutatingRequests of an exposition without apiserver_request_total: no error")
	}
}
