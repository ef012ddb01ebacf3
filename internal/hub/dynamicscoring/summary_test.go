package dynamicscoring

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dsv1alpha1 "github.com/flotilla/flotilla/api/dynamicscoring/v1alpha1"
	"github.com/flotilla/flotilla/internal/contract/scoringwire"
)

func scorer(name, score string, health dsv1alpha1.ScorerHealthStatus) dsv1alpha1.DynamicScorer {
	return dsv1alpha1.DynamicScorer{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: dsv1alpha1.DynamicScorerSpec{
		ConfigURL: "http://scorer:8080/config", ConfigSyncMode: dsv1alpha1.ConfigSyncModeNone,
		Source: &dsv1alpha1.SourceSpec{Type: dsv1alpha1.SourceTypePrometheus, Host: "http://prom:9090",
			Params: &dsv1alpha1.SourceParams{Query: "up", Range: 60, Step: 10},
			Auth:   &dsv1alpha1.Auth{TokenSecretRef: dsv1alpha1.SecretKeyReference{Name: "prom", Key: "token"}}},
		Scoring: &dsv1alpha1.ScoringSpec{Params: &dsv1alpha1.ScoringParams{Name: score, Interval: 30}},
	}, Status: dsv1alpha1.DynamicScorerStatus{HealthStatus: health}}
}

func TestSummarize(t *testing.T) {
	full := scorer("full", "", dsv1alpha1.ScorerHealthActive)
	full.Spec.ConfigSyncMode, full.Spec.Source, full.Spec.Scoring = dsv1alpha1.ConfigSyncModeFull, nil, nil
	full.Status.LastSyncedConfig = &dsv1alpha1.SyncedConfig{Name: "x",
		Source:  dsv1alpha1.SyncedSource{Type: "Prometheus", Host: "http://p:9090", Path: "/api/v1/query_range", Params: dsv1alpha1.SyncedSourceParams{Query: "q", Range: 5, Step: 1}},
		Scoring: dsv1alpha1.SyncedScoring{Path: "/scoring", Params: dsv1alpha1.SyncedScoringParams{Name: "synced", Interval: 7}}}
	noName := scorer("no-name", "", dsv1alpha1.ScorerHealthActive)
	badHost := scorer("bad-host", "s", dsv1alpha1.ScorerHealthActive)
	badHost.Spec.Source.Host, badHost.Spec.ConfigURL = "prom", ""
	// Hosts the agent's HTTP client reads otherwise (found by FuzzConfig): refused.
	noHostName := scorer("no-host-name", "s", dsv1alpha1.ScorerHealthActive)
	noHostName.Spec.Scoring.Host, noHostName.Spec.ConfigURL = "", "A://::"
	emptyHost := scorer("empty-host", "s", dsv1alpha1.ScorerHealthActive)
	emptyHost.Spec.Source.Host = "http://:9090"
	// /config names other hosts for endpoints that carry a token: refused.
	movedScoring := scorer("moved-scoring", "s", dsv1alpha1.ScorerHealthActive)
	movedScoring.Spec.ConfigSyncMode = dsv1alpha1.ConfigSyncModeFull
	movedScoring.Spec.Scoring.Auth = &dsv1alpha1.Auth{TokenSecretRef: dsv1alpha1.SecretKeyReference{Name: "sc", Key: "token"}}
	movedScoring.Status.LastSyncedConfig = &dsv1alpha1.SyncedConfig{Scoring: dsv1alpha1.SyncedScoring{Host: "http://attacker:80"}}
	movedSource := scorer("moved-source", "s", dsv1alpha1.ScorerHealthActive)
	movedSource.Spec.ConfigSyncMode = dsv1alpha1.ConfigSyncModeFull
	movedSource.Status.LastSyncedConfig = &dsv1alpha1.SyncedConfig{Source: dsv1alpha1.SyncedSource{Host: "http://attacker:9090"}}
	// Without a token, /config may name the hosts (OCM contrib's scorers do).
	movedNoToken := scorer("moved-no-token", "s", dsv1alpha1.ScorerHealthActive)
	movedNoToken.Spec.ConfigSyncMode, movedNoToken.Spec.Source.Auth = dsv1alpha1.ConfigSyncModeFull, nil
	movedNoToken.Status.LastSyncedConfig = &dsv1alpha1.SyncedConfig{Source: dsv1alpha1.SyncedSource{Host: "http://prom2:9090"},
		Scoring: dsv1alpha1.SyncedScoring{Host: "http://scorer2:80"}}
	for name, tc := range map[string]struct {
		in      dsv1alpha1.DynamicScorer
		want    scoringwire.Summary
		wantErr string
	}{
		"spec, scoring host from configURL, default paths": {in: scorer("a", "gpu", dsv1alpha1.ScorerHealthActive), want: scoringwire.Summary{
			Namespace: "ns", Name: "a", ScoreName: "gpu", SourceType: "Prometheus", SourceEndpoint: "http://prom:9090/api/v1/query_range",
			SourceEndpointAuthName: "prom", SourceEndpointAuthKey: "token", SourceQuery: "up", SourceRange: 60, SourceStep: 10,
			ScoringEndpoint: "http://scorer:8080" + dsv1alpha1.DefaultScoringPath, ScoringInterval: 30,
			ScoreDestination: "AddOnPlacementScore", ScoreDimensionFormat: "${scoreName}"}},
		"configuration synced from /config": {in: full, want: scoringwire.Summary{
			Namespace: "ns", Name: "full", ScoreName: "synced", SourceType: "Prometheus", SourceEndpoint: "http://p:9090/api/v1/query_range",
			SourceQuery: "q", SourceRange: 5, SourceStep: 1, ScoringEndpoint: "http://scorer:8080/scoring", ScoringInterval: 7,
			ScoreDestination: "AddOnPlacementScore", ScoreDimensionFormat: "${scoreName}", FromConfig: true}},
		"/config names hosts, no token": {in: movedNoToken, want: scoringwire.Summary{
			Namespace: "ns", Name: "moved-no-token", ScoreName: "s", SourceType: "Prometheus", SourceEndpoint: "http://prom2:9090/api/v1/query_range",
			SourceQuery: "up", SourceRange: 60, SourceStep: 10, ScoringEndpoint: "http://scorer2:80" + dsv1alpha1.DefaultScoringPath, ScoringInterval: 30,
			ScoreDestination: "AddOnPlacementScore", ScoreDimensionFormat: "${scoreName}", FromConfig: true}},
		"/config moves the scoring token's host": {in: movedScoring, wantErr: "spec.scoring.auth.tokenSecretRef: the token would go to http://attacker:80, not http://scorer:8080"},
		"/config moves the source token's host":  {in: movedSource, wantErr: "spec.source.auth.tokenSecretRef: the token would go to http://attacker:9090, not http://prom:9090"},
		"no score name":                          {in: noName, wantErr: "spec.scoring.params.name"},
		"bad host":                               {in: badHost, wantErr: "spec.source.host"},
		"unbracketed IPv6 configURL":             {in: noHostName, wantErr: `spec.scoring.host: "a://::" names no host name`},
		"a port and no host":                     {in: emptyHost, wantErr: `spec.source.host: "http://:9090" names no host name`},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := Summarize(&tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildSummaries(t *testing.T) {
	scorers := []dsv1alpha1.DynamicScorer{
		scorer("b", "beta", dsv1alpha1.ScorerHealthActive),
		scorer("a", "alpha", dsv1alpha1.ScorerHealthActive),
		scorer("down", "down", dsv1alpha1.ScorerHealthInactive),
		scorer("masked", "masked", dsv1alpha1.ScorerHealthActive),
		scorer("dup", "alpha", dsv1alpha1.ScorerHealthActive),
	}
	masks := map[string][]dsv1alpha1.ScoreMask{"ns": {{ClusterName: "c1", ScoreName: "masked"}}}
	for name, tc := range map[string]struct {
		cluster      string
		want         []string
		wantProblems []string
	}{
		"masked for c1":     {cluster: "c1", want: []string{"alpha", "beta"}, wantProblems: []string{"ns/dup"}},
		"not masked for c2": {cluster: "c2", want: []string{"alpha", "beta", "masked"}, wantProblems: []string{"ns/dup"}},
	} {
		t.Run(name, func(t *testing.T) {
			sums, problems := BuildSummaries(tc.cluster, scorers, masks)
			var got, gotProblems []string
			for _, s := range sums {
				got = append(got, s.ScoreName)
			}
			for k := range problems {
				gotProblems = append(gotProblems, k)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantProblems, gotProblems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {})
	mux.HandleFunc("/config", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"name":"n","description":"d","source":{"path":"/q","params":{"query":"up","range":1,"step":1}},"scoring":{"path":"/s","params":{"name":"x","interval":3}}}`))
	})
	mux.HandleFunc("/bad-config", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"name":`)) })
	mux.HandleFunc("/moved/config", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/config", http.StatusFound) })
	mux.HandleFunc("/slow/config", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	})
	ok := httptest.NewServer(mux)
	defer ok.Close()
	unhealthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer unhealthy.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, ok.URL+r.URL.Path, http.StatusFound) }))
	defer redirecting.Close()
	c := httpClient(300*time.Millisecond, true)
	for name, tc := range map[string]struct {
		url        string
		blockLocal bool
		mode       dsv1alpha1.ConfigSyncMode
		wantStatus dsv1alpha1.ScorerHealthStatus
		wantReason string
		wantSynced bool
	}{
		"healthy":             {url: ok.URL + "/config", mode: dsv1alpha1.ConfigSyncModeNone, wantStatus: dsv1alpha1.ScorerHealthActive},
		"healthy and synced":  {url: ok.URL + "/config", mode: dsv1alpha1.ConfigSyncModeFull, wantStatus: dsv1alpha1.ScorerHealthActive, wantSynced: true},
		"malformed config":    {url: ok.URL + "/bad-config", mode: dsv1alpha1.ConfigSyncModeFull, wantStatus: dsv1alpha1.ScorerHealthInactive, wantReason: ReasonConfigInvalid},
		"slow config":         {url: ok.URL + "/slow/config", mode: dsv1alpha1.ConfigSyncModeFull, wantStatus: dsv1alpha1.ScorerHealthInactive, wantReason: ReasonConfigSyncFailed},
		"unhealthy":           {url: unhealthy.URL + "/config", mode: dsv1alpha1.ConfigSyncModeNone, wantStatus: dsv1alpha1.ScorerHealthInactive, wantReason: ReasonScorerUnhealthy},
		"down":                {url: down.URL + "/config", mode: dsv1alpha1.ConfigSyncModeNone, wantStatus: dsv1alpha1.ScorerHealthInactive, wantReason: ReasonScorerUnhealthy},
		"configURL not a URL": {url: "scorer/config", mode: dsv1alpha1.ConfigSyncModeNone, wantStatus: dsv1alpha1.ScorerHealthInactive, wantReason: ReasonScorerUnhealthy},
		"loopback without the allow option": {url: ok.URL + "/config", blockLocal: true, mode: dsv1alpha1.ConfigSyncModeNone,
			wantStatus: dsv1alpha1.ScorerHealthInactive, wantReason: ReasonScorerUnhealthy},
		"metadata address": {url: "http://169.254.169.254/config", mode: dsv1alpha1.ConfigSyncModeNone,
			wantStatus: dsv1alpha1.ScorerHealthInactive, wantReason: ReasonScorerUnhealthy},
		"health check redirected": {url: redirecting.URL + "/config", mode: dsv1alpha1.ConfigSyncModeNone,
			wantStatus: dsv1alpha1.ScorerHealthInactive, wantReason: ReasonScorerUnhealthy},
		"configuration redirected": {url: ok.URL + "/moved/config", mode: dsv1alpha1.ConfigSyncModeFull,
			wantStatus: dsv1alpha1.ScorerHealthInactive, wantReason: ReasonConfigSyncFailed},
	} {
		t.Run(name, func(t *testing.T) {
			s := &dsv1alpha1.DynamicScorer{Spec: dsv1alpha1.DynamicScorerSpec{ConfigURL: tc.url, ConfigSyncMode: tc.mode}}
			client := c
			if tc.blockLocal {
				client = httpClient(300*time.Millisecond, false)
			}
			h := Check(context.Background(), client, s, !tc.blockLocal)
			got := []any{h.Status, h.Reason, h.Synced != nil}
			if diff := cmp.Diff([]any{tc.wantStatus, tc.wantReason, tc.wantSynced}, got); diff != "" {
				t.Errorf("(-want +got):\n%s (message %q)", diff, h.Message)
			}
			if h.Status == dsv1alpha1.ScorerHealthInactive && !strings.Contains(h.Message, "spec.configURL") {
				t.Errorf("message %q does not name spec.configURL", h.Message)
			}
		})
	}
}
