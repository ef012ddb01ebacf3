package dynamicscoring

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/agent/addon"
	"github.com/flotilla/flotilla/internal/contract/scoringwire"
	"github.com/flotilla/flotilla/internal/egress"
)

// maxBody bounds what the add-on reads of an answer.
const maxBody = 16 << 20

// refusedHint says what the add-on refuses to reach.
const refusedHint = "agents reach no cloud metadata address, no loopback or link-local address unless run with " + AllowLocalFlag +
	", and follow no redirect"

// AllowLocalFlag is flotilla agent's flag that sets AddOn.AllowLocal.
const AllowLocalFlag = "--dynamic-scoring-allow-local-addresses"

// scoreOnce scores s once and records the outcome on its AddOnPlacementScore.
func (r *runner) scoreOnce(ctx context.Context, s scoringwire.Summary) error {
	o := r.score(ctx, s)
	if ctx.Err() != nil {
		return nil
	}
	if s.ScoreDestination == "None" {
		return nil
	}
	return r.write(ctx, s, o)
}

// score runs the source's queries and the scoring API.
func (r *runner) score(ctx context.Context, s scoringwire.Summary) outcome {
	data := []Series{}
	if s.SourceType == "Prometheus" {
		token, o := r.token(ctx, s, s.SourceEndpointAuthName, s.SourceEndpointAuthKey, "source.auth.tokenSecretRef")
		if o != nil {
			return *o
		}
		for _, q := range Queries(s.SourceQuery) {
			series, o := r.query(ctx, s, q, token)
			if o != nil {
				return *o
			}
			data = append(data, series...)
		}
	}
	token, o := r.token(ctx, s, s.ScoringEndpointAuthName, s.ScoringEndpointAuthKey, "scoring.auth.tokenSecretRef")
	if o != nil {
		return *o
	}
	body, err := json.Marshal(ScoringRequest{Data: data})
	if err != nil {
		return failed(ReasonScorerFailed, "%s: encoding the series: %v", s.ScorerRef(), err)
	}
	status, answer, err := r.do(ctx, http.MethodPost, s.ScoringEndpoint, token, body)
	scoring := s.Field("scoring.host") + " and " + s.Field("scoring.path")
	switch {
	case errors.Is(err, egress.ErrRefused):
		return failed(ReasonScorerUnreachable, "%s: the scoring request to %s was not sent: %v; set %s to the scorer's service address (%s)",
			s.ScorerRef(), s.ScoringEndpoint, err, scoring, refusedHint)
	case isTimeout(err):
		return failed(ReasonScorerTimeout, "%s: the scoring API %s did not answer within %s: make the scorer answer faster, or check %s",
			s.ScorerRef(), s.ScoringEndpoint, r.http.Timeout, scoring)
	case err != nil:
		return failed(ReasonScorerUnreachable, "%s: cannot reach the scoring API %s: %v; set %s to the scorer's address reachable from the cluster",
			s.ScorerRef(), s.ScoringEndpoint, err, scoring)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return failed(ReasonScorerFailed, "%s: the scoring API %s refused the request with HTTP %d; set %s to a Secret holding a token the scorer accepts",
			s.ScorerRef(), s.ScoringEndpoint, status, s.Field("scoring.auth.tokenSecretRef"))
	case status != http.StatusOK:
		return failed(ReasonScorerFailed, "%s: the scoring API %s answered HTTP %d: %.300s; check %s and the scorer's logs",
			s.ScorerRef(), s.ScoringEndpoint, status, answer, scoring)
	}
	scores, err := ParseScores(answer, s.ScoreDimensionFormat, r.env.ClusterName, s.ScoreName)
	var re *ResponseError
	if errors.As(err, &re) {
		return failed(re.Reason, "%s: the scoring API %s (%s) answered unusable scores: %s; fix the scorer",
			s.ScorerRef(), s.ScoringEndpoint, scoring, re.Message)
	}
	return outcome{scores: scores}
}

// query runs one range query of the source.
func (r *runner) query(ctx context.Context, s scoringwire.Summary, q, token string) ([]Series, *outcome) {
	u, err := scoringwire.QueryURL(s.SourceEndpoint, q, r.env.Clock.Now(), s.SourceRange, s.SourceStep)
	if err != nil {
		o := failed(ReasonSourceUnreachable, "%s: the source endpoint %v; set %s to the Prometheus URL, such as http://prometheus.monitoring.svc:9090",
			s.ScorerRef(), err, s.Field("source.host"))
		return nil, &o
	}
	status, body, err := r.do(ctx, http.MethodGet, u, token, nil)
	if errors.Is(err, egress.ErrRefused) {
		o := failed(ReasonSourceUnreachable, "%s: the query to the source %s was not sent: %v; set %s to the Prometheus service address (%s)",
			s.ScorerRef(), s.SourceEndpoint, err, s.Field("source.host"), refusedHint)
		return nil, &o
	}
	if err != nil {
		o := failed(ReasonSourceUnreachable, "%s: cannot query the source %s: %v; set %s (and %s) to the Prometheus reachable from the cluster",
			s.ScorerRef(), s.SourceEndpoint, err, s.Field("source.host"), s.Field("source.path"))
		return nil, &o
	}
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		o := failed(ReasonSourceQueryFailed, "%s: the source %s refused the query with HTTP %d; set %s to a Secret holding a token the source accepts",
			s.ScorerRef(), s.SourceEndpoint, status, s.Field("source.auth.tokenSecretRef"))
		return nil, &o
	}
	series, err := ParseMatrix(status, body)
	if err != nil {
		o := failed(ReasonSourceQueryFailed, "%s: the source %s did not run the query %q: %v; fix the PromQL in %s (or the path in %s)",
			s.ScorerRef(), s.SourceEndpoint, q, err, s.Field("source.params.query"), s.Field("source.path"))
		return nil, &o
	}
	return series, nil
}

// token reads a bearer token from a Secret in the add-on's install namespace on the spoke.
func (r *runner) token(ctx context.Context, s scoringwire.Summary, name, key, field string) (string, *outcome) {
	if name == "" {
		return "", nil
	}
	ns := addon.DefaultInstallNamespace
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := r.env.Hub.Get(ctx, client.ObjectKey{Namespace: r.env.ClusterName, Name: Name}, mca); err == nil {
		ns = addon.InstallNamespace(mca)
	}
	secret, err := r.spoke.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		what := err.Error()
		if apierrors.IsNotFound(err) {
			what = "it does not exist"
		}
		o := failed(ReasonAuthSecretMissing, "%s: cannot read Secret %s/%s on the cluster named by spec.%s: %s; create it in namespace %s with the token under key %q",
			s.ScorerRef(), ns, name, field, what, ns, key)
		return "", &o
	}
	v, ok := secret.Data[key]
	if !ok || len(v) == 0 {
		o := failed(ReasonAuthSecretMissing, "%s: Secret %s/%s named by spec.%s has no key %q; add the token under that key, or fix spec.%s.key",
			s.ScorerRef(), ns, name, field, key, field)
		return "", &o
	}
	return string(bytes.TrimSpace(v)), nil
}

// do sends one request and reads the answer.
func (r *runner) do(ctx context.Context, method, url, token string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	// No redirect is followed: the token goes only to the endpoint the hub's list names.
	resp, err := egress.Do(ctx, r.http, req, r.allowLocal)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("reading the answer: %w", err)
	}
	return resp.StatusCode, b, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}
