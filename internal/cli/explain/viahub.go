package explain

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/flotilla/flotilla/internal/cli/kubeflags"
	"github.com/flotilla/flotilla/internal/cli/streams"
	"github.com/flotilla/flotilla/internal/hub/explain"
)

// runViaHub asks the hub's explanation server at o.viaHub to explain ns/name, authenticating with
// the kubeconfig's credentials (a bearer token, a token file, or an exec or auth-provider plugin
// that yields one), and prints its JSON answer.
func runViaHub(ctx context.Context, io streams.IO, hub *kubeflags.Loaded, o options, ns, name string) error {
	if o.output != "json" {
		return fmt.Errorf("--via-hub prints the hub's JSON answer only: add -o json, or drop --via-hub to compute the table here")
	}
	base, err := url.Parse(o.viaHub)
	if err != nil || base.Scheme != "https" || base.Host == "" {
		return fmt.Errorf("--via-hub %q: give the explanation server's https://HOST:PORT (flotilla hub --explain-bind-address)", o.viaHub)
	}
	cfg := rest.CopyConfig(hub.Config)
	if cfg.BearerToken == "" && cfg.BearerTokenFile == "" && cfg.ExecProvider == nil && cfg.AuthProvider == nil {
		return fmt.Errorf("kubeconfig %s has no bearer token (a client certificate is not accepted by the hub's explanation server): "+
			"use a kubeconfig with a token, such as one from `kubectl create token`, or drop --via-hub", hub.Source)
	}
	// The explanation server has a certificate of its own: trust --via-hub-ca (or the system's
	// roots), not the API server's authority, and send no client certificate.
	cfg.TLSClientConfig = rest.TLSClientConfig{CAFile: o.viaHubCA}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return fmt.Errorf("--via-hub: %w", err)
	}
	u := strings.TrimSuffix(base.String(), "/") + explain.PathPrefix + url.PathEscape(ns) + "/placements/" + url.PathEscape(name)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("asking the hub's explanation server about placement %s/%s: %w; check --via-hub and --via-hub-ca", ns, name, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := readAll(resp.Body)
	if err != nil {
		return fmt.Errorf("reading the explanation of placement %s/%s from %s: %w", ns, name, o.viaHub, err)
	}
	if resp.StatusCode != http.StatusOK {
		var st metav1.Status
		if json.Unmarshal(body, &st) == nil && st.Message != "" {
			return fmt.Errorf("the hub's explanation server at %s answered %d: %s", o.viaHub, resp.StatusCode, st.Message)
		}
		return fmt.Errorf("the hub's explanation server at %s answered %s: %s", o.viaHub, resp.Status, bytes.TrimSpace(body))
	}
	var out bytes.Buffer
	if err := json.Indent(&out, body, "", "  "); err != nil {
		return fmt.Errorf("the hub's explanation server at %s answered with malformed JSON: %w", o.viaHub, err)
	}
	_, err = fmt.Fprintf(io.Out, "%s\n", bytes.TrimSpace(out.Bytes()))
	return err
}

// readAll reads r whole, up to 64 MiB (an explanation of 10,000 clusters is a few MiB).
func readAll(r io.Reader) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, 64<<20))
}
