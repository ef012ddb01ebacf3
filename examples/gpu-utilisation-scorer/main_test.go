package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScore(t *testing.T) {
	for name, tc := range map[string]struct {
		values [][2]any
		want   float64
		wantOK bool
	}{
		"idle":               {values: [][2]any{{1.0, "0"}, {2.0, "0"}}, want: 100, wantOK: true},
		"half busy":          {values: [][2]any{{1.0, "40"}, {2.0, "60"}}, want: 0, wantOK: true},
		"busy":               {values: [][2]any{{1.0, "100"}}, want: -100, wantOK: true},
		"rounded":            {values: [][2]any{{1.0, "12.3"}}, want: 75, wantOK: true},
		"non-numeric values": {values: [][2]any{{1.0, "NaN"}, {2.0, 3.0}}, wantOK: false},
		"no values":          {wantOK: false},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := Score(Series{Values: tc.values})
			if diff := cmp.Diff([]any{tc.want, tc.wantOK}, []any{got, ok}); diff != "" {
				t.Errorf("Score (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHandler(t *testing.T) {
	srv := httptest.NewServer(Handler(Config{Name: "gpu", Scoring: Scoring{Path: "/scoring", Params: ScoringParams{Name: "gpu", Interval: 5}}}))
	defer srv.Close()
	body := `{"data":[{"metric":{"node":"n1"},"values":[[1,"10"],[2,"30"]]},{"metric":{"node":"n2"},"values":[]}]}`
	resp, err := http.Post(srv.URL+"/scoring", "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var got struct {
		Results []Result `json:"results"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	want := []Result{{Metric: map[string]string{"node": "n1"}, Score: 60}}
	if diff := cmp.Diff(want, got.Results); diff != "" {
		t.Errorf("/scoring (-want +got):\n%s", diff)
	}
	for path, wantStatus := range map[string]int{"/healthz": 200, "/config": 200} {
		r, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		_ = r.Body.Close()
		if r.StatusCode != wantStatus {
			t.Errorf("GET %s: HTTP %d, want %d", path, r.StatusCode, wantStatus)
		}
	}
	r, err := http.Post(srv.URL+"/scoring", "application/json", bytes.NewBufferString("nope"))
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Body.Close()
	if r.StatusCode != http.StatusBadRequest {
		t.Errorf("POST /scoring of a bad body: HTTP %d, want 400", r.StatusCode)
	}
}
