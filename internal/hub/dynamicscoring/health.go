package dynamicscoring

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	dsv1alpha1 "github.com/flotilla/flotilla/api/dynamicscoring/v1alpha1"
	"github.com/flotilla/flotilla/internal/egress"
)

// Event reasons of a DynamicScorer.
const (
	ReasonScorerActive     = "ScorerActive"
	ReasonScorerUnhealthy  = "ScorerUnhealthy"
	ReasonConfigSyncFailed = "ConfigSyncFailed"
	ReasonConfigInvalid    = "ConfigInvalid"
)

// Health is the outcome of one check of a scorer.
type Health struct {
	Status dsv1alpha1.ScorerHealthStatus
	// Synced is the configuration the scorer served (configSyncMode Full).
	Synced *dsv1alpha1.SyncedConfig
	// Reason and Message say why the scorer is Inactive.
	Reason, Message string
}

func inactive(reason, format string, args ...any) Health {
	return Health{Status: dsv1alpha1.ScorerHealthInactive, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Check GETs /healthz on the host of spec.configURL and, with configSyncMode Full, the
// configuration at spec.configURL, as OCM contrib's hub. c bounds each request by its Timeout;
// egress.Do refuses local and metadata addresses (unless allowLocal) and redirects.
func Check(ctx context.Context, c *http.Client, s *dsv1alpha1.DynamicScorer, allowLocal bool) Health {
	u, err := url.Parse(s.Spec.ConfigURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return inactive(ReasonScorerUnhealthy, "spec.configURL %q is not an absolute URL: set it to the scorer's configuration URL, such as http://scorer.scoring.svc:8080/config; "+
			"the hub checks /healthz on its host", s.Spec.ConfigURL)
	}
	healthz := u.Scheme + "://" + u.Host + "/healthz"
	status, _, err := get(ctx, c, healthz, allowLocal)
	switch {
	case errors.Is(err, egress.ErrRefused):
		return inactive(ReasonScorerUnhealthy, "the health check %s was not sent: %v; set spec.configURL to the scorer's service address "+
			"(the hub reaches no loopback, link-local or metadata address, unless started with %s, and follows no redirect)", healthz, err, AllowLocalFlag)
	case err != nil:
		return inactive(ReasonScorerUnhealthy, "the health check %s failed: %v; start the scorer, or fix the host of spec.configURL", healthz, err)
	case status != http.StatusOK:
		return inactive(ReasonScorerUnhealthy, "the health check %s answered HTTP %d, want 200; fix the scorer, or the host of spec.configURL", healthz, status)
	}
	h := Health{Status: dsv1alpha1.ScorerHealthActive}
	if s.Spec.ConfigSyncMode != dsv1alpha1.ConfigSyncModeFull {
		return h
	}
	status, body, err := get(ctx, c, s.Spec.ConfigURL, allowLocal)
	switch {
	case errors.Is(err, egress.ErrRefused):
		return inactive(ReasonConfigSyncFailed, "the configuration at spec.configURL %s was not read: %v; serve it at its final address, or set spec.configSyncMode to None", s.Spec.ConfigURL, err)
	case err != nil:
		return inactive(ReasonConfigSyncFailed, "reading the configuration at spec.configURL %s failed: %v; serve it there, or set spec.configSyncMode to None", s.Spec.ConfigURL, err)
	case status != http.StatusOK:
		return inactive(ReasonConfigSyncFailed, "the configuration at spec.configURL %s answered HTTP %d, want 200; serve it there, or set spec.configSyncMode to None", s.Spec.ConfigURL, status)
	}
	cfg, err := decodeConfig(body)
	if err != nil {
		return inactive(ReasonConfigInvalid, "the configuration at spec.configURL %s is not the JSON {\"name\",\"description\",\"source\":{...},\"scoring\":{...}}: %v; "+
			"fix the scorer's /config, or set spec.configSyncMode to None", s.Spec.ConfigURL, err)
	}
	h.Synced = cfg
	return h
}

// decodeConfig reads what a scorer serves at its /config. The scorer is not trusted: Summarize
// decides what of it the agents use, and never lets it move where a token goes.
func decodeConfig(body []byte) (*dsv1alpha1.SyncedConfig, error) {
	cfg := &dsv1alpha1.SyncedConfig{}
	if err := json.Unmarshal(body, cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

func get(ctx context.Context, c *http.Client, u string, allowLocal bool) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := egress.Do(ctx, c, req, allowLocal)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, b, err
}
