package dynamicscoring

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dsv1alpha1 "github.com/flotilla/flotilla/api/dynamicscoring/v1alpha1"
	"github.com/flotilla/flotilla/internal/contract/scoringwire"
)

// FuzzConfig feeds what a scorer serves at /config (configSyncMode Full) through the hub's
// decoding and Summarize, with arbitrary spec hosts, as the scorer's operator and the
// DynamicScorer's author may write them. It must never panic; a summary it accepts reaches the
// agent unchanged through the ConfigMap; and whenever a token is sent, the request the agent
// builds (the Prometheus range query, the scoring POST) goes to the scheme and host the spec
// names (or spec.configURL's), never to one the scorer served.
func FuzzConfig(f *testing.F) {
	for _, seed := range []struct{ body, specSource, specScoring, configURL string }{
		{`{"name":"s","description":"d","source":{"type":"Prometheus","host":"http://prom:9090","path":"/api/v1/query_range","params":{"query":"up","range":60,"step":10}},"scoring":{"host":"http://scorer:8080","path":"/scoring","params":{"name":"gpu","interval":30}}}`,
			"http://prom:9090", "http://scorer:8080", "http://scorer:8080/config"},
		{`{"source":{"host":"http://attacker:9090"}}`, "http://prom:9090", "", "http://scorer:8080/config"},
		{`{"scoring":{"host":"http://attacker"}}`, "http://prom:9090", "", "http://scorer:8080/config"},
		{`{"scoring":{"host":"HTTP://SCORER:8080","path":"/x"}}`, "", "", "http://scorer:8080/config"},
		{`{"scoring":{"host":"http://scorer:8080@attacker","path":"/x"}}`, "http://prom:9090", "http://scorer:8080", ""},
		{`{"scoring":{"path":"//attacker/x"}}`, "http://prom:9090", "http://scorer:8080", ""},
		{`{"scoring":{"path":"/../../x?y#z"}}`, "http://prom:9090", "http://scorer:8080/base", ""},
		{`{"source":{"path":"http://attacker/q"}}`, "http://prom:9090", "", "http://scorer:8080/config"},
		{`{"scoring":{"host":"http://[::1]:80"}}`, "http://prom:9090", "http://[::1]", ""},
		{`{"scoring":{"host":"http://scorer:8080#@attacker"}}`, "http://prom:9090", "http://scorer:8080", ""},
		{`{"scoring":{"host":"http://scorer%2f:8080"}}`, "http://prom:9090", "http://scorer:8080", ""},
		{`{"scoring":{"params":{"name":"","interval":-1}}}`, "", "", "http://scorer:8080/config"},
		{`{"source":{"params":{"range":9223372036854775807,"step":1}}}`, "http://prom:9090", "", "http://scorer:8080/config"},
		{`{"scoring":{"params":{"interval":9223372036854775807}}}`, "http://prom:9090", "", "http://scorer:8080/config"},
		{`{"scoring":{"host":7}}`, "", "", ""},
		{`[]`, "", "", ""},
		{``, "", "", ""},
	} {
		f.Add([]byte(seed.body), seed.specSource, seed.specScoring, seed.configURL)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte, specSource, specScoring, configURL string) {
		cfg, err := decodeConfig(body)
		if err != nil {
			return
		}
		s := &dsv1alpha1.DynamicScorer{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}, Spec: dsv1alpha1.DynamicScorerSpec{
			ConfigURL: configURL, ConfigSyncMode: dsv1alpha1.ConfigSyncModeFull,
			Source: &dsv1alpha1.SourceSpec{Type: dsv1alpha1.SourceTypePrometheus, Host: specSource,
				Params: &dsv1alpha1.SourceParams{Query: "up", Range: 60, Step: 10},
				Auth:   &dsv1alpha1.Auth{TokenSecretRef: dsv1alpha1.SecretKeyReference{Name: "prom", Key: "token"}}},
			Scoring: &dsv1alpha1.ScoringSpec{Host: specScoring, Params: &dsv1alpha1.ScoringParams{Name: "gpu", Interval: 30},
				Auth: &dsv1alpha1.Auth{TokenSecretRef: dsv1alpha1.SecretKeyReference{Name: "scorer", Key: "token"}}},
		}, Status: dsv1alpha1.DynamicScorerStatus{LastSyncedConfig: cfg}}
		sum, err := Summarize(s)
		if err != nil {
			return
		}

		if sum.ScoringInterval <= 0 || sum.ScoringInterval > scoringwire.MaxSeconds {
			t.Fatalf("Summarize accepted the scoring interval %d, outside 1..%d", sum.ScoringInterval, scoringwire.MaxSeconds)
		}
		if sum.SourceType == string(dsv1alpha1.SourceTypePrometheus) && (sum.SourceRange <= 0 || sum.SourceRange > scoringwire.MaxSeconds ||
			sum.SourceStep <= 0 || sum.SourceStep > scoringwire.MaxSeconds) {
			t.Fatalf("Summarize accepted the source range %d and step %d, outside 1..%d", sum.SourceRange, sum.SourceStep, scoringwire.MaxSeconds)
		}

		// The agent reads the summary from the ConfigMap the hub writes.
		data, err := scoringwire.EncodeSummaries([]scoringwire.Summary{sum})
		if err != nil {
			t.Fatalf("EncodeSummaries: %v", err)
		}
		got, err := scoringwire.DecodeSummaries(map[string]string{scoringwire.SummariesKey: data})
		if err != nil {
			t.Fatalf("DecodeSummaries of what the hub wrote: %v", err)
		}
		if diff := cmp.Diff([]scoringwire.Summary{sum}, got); diff != "" {
			t.Fatalf("the summary changed through the ConfigMap (-hub +agent):\n%s", diff)
		}
		sum = got[0]

		base := ""
		if u, err := url.Parse(configURL); err == nil && u.Scheme != "" && u.Host != "" {
			base = u.Scheme + "://" + u.Host
		}
		// The agent POSTs to the scoring endpoint as it is, and GETs the range query URL built from
		// the source endpoint; both carry the token.
		req, err := http.NewRequest(http.MethodPost, sum.ScoringEndpoint, nil)
		if err != nil {
			t.Fatalf("Summarize accepted scoring endpoint %q that the agent cannot request: %v", sum.ScoringEndpoint, err)
		}
		sameOriginAs(t, "scoring", req.URL, firstSet(specScoring, base))
		if sum.SourceType == string(dsv1alpha1.SourceTypePrometheus) {
			q, err := scoringwire.QueryURL(sum.SourceEndpoint, "up", now, sum.SourceRange, sum.SourceStep)
			if err != nil {
				t.Fatalf("Summarize accepted source endpoint %q that the agent cannot query: %v", sum.SourceEndpoint, err)
			}
			req, err := http.NewRequest(http.MethodGet, q, nil)
			if err != nil {
				t.Fatalf("the agent's query URL %q is no request: %v", q, err)
			}
			sameOriginAs(t, "source", req.URL, firstSet(specSource, base))
		}
	})
}

// sameOriginAs fails unless got goes to the scheme and host of want, the host the spec names.
func sameOriginAs(t *testing.T, what string, got *url.URL, want string) {
	t.Helper()
	w, err := url.Parse(want)
	if err != nil || w.Host == "" {
		t.Fatalf("the %s token goes to %s://%s while the spec names no host (%q)", what, got.Scheme, got.Host, want)
	}
	// An empty port is the scheme's default, as no port is (RFC 3986 3.2.3): "h:" and "h" are one
	// origin, and url.Parse keeps the colon where the agent's request drops it.
	if !strings.EqualFold(got.Scheme, w.Scheme) || !strings.EqualFold(got.Hostname(), w.Hostname()) || got.Port() != w.Port() {
		t.Fatalf("the %s token goes to %s://%s, not to the spec's %s://%s", what, got.Scheme, got.Host, w.Scheme, w.Host)
	}
}
