//go:build integration

package dynamicscoring

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// promHost is the source host every DynamicScorer names; each spoke's add-on reaches its own
// Prometheus there, as each cluster's agent reaches its in-cluster Prometheus at one Service name.
const promHost = "prometheus.monitoring.svc:9090"

// exporter serves DCGM_FI_DEV_GPU_UTIL of two GPUs in Prometheus text format.
type exporter struct {
	util atomic.Int64
	srv  *httptest.Server
}

func newExporter(t *testing.T, util int64) *exporter {
	e := &exporter{}
	e.util.Store(util)
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = fmt.Fprintf(w, "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %%).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n")
		for gpu := 0; gpu < 2; gpu++ {
			_, _ = fmt.Fprintf(w, "DCGM_FI_DEV_GPU_UTIL{gpu=\"%d\",modelName=\"NVIDIA H100\"} %d\n", gpu, e.util.Load())
		}
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *exporter) target() string { return strings.TrimPrefix(e.srv.URL, "http://") }

// transportTo routes promHost to prom (host:port) and everything else as usual.
func transportTo(prom string) http.RoundTripper {
	d := &net.Dialer{Timeout: 2 * time.Second}
	return &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == promHost {
			addr = prom
		}
		return d.DialContext(ctx, network, addr)
	}}
}

// scorer is a test scoring service: /healthz, /config and /scoring (100 - 2 x mean of each
// series), and /flaky, whose answer the test switches.
type scorer struct {
	srv *httptest.Server
	mu  sync.Mutex
	// flaky is "ok", "malformed", "out-of-range" or "slow".
	flaky string
}

func newScorer(t *testing.T) *scorer {
	s := &scorer{flaky: "ok"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /config", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]any{"name": "gpu", "description": "GPU utilization",
			"source":  map[string]any{"type": "Prometheus", "host": "http://" + promHost, "path": "/api/v1/query_range", "params": map[string]any{"query": "avg(DCGM_FI_DEV_GPU_UTIL)", "range": 2, "step": 1}},
			"scoring": map[string]any{"path": "/scoring", "params": map[string]any{"name": "gpu-util", "interval": 1}}})
	})
	mux.HandleFunc("POST /scoring", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Data []struct {
				Metric map[string]string `json:"metric"`
				Values [][2]any          `json:"values"`
			} `json:"data"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		results := []map[string]any{}
		for _, d := range req.Data {
			sum, n := 0.0, 0
			for _, v := range d.Values {
				var f float64
				if str, ok := v[1].(string); ok {
					if _, err := fmt.Sscan(str, &f); err == nil {
						sum, n = sum+f, n+1
					}
				}
			}
			if n > 0 {
				results = append(results, map[string]any{"metric": d.Metric, "score": 100 - 2*sum/float64(n)})
			}
		}
		writeJSON(w, map[string]any{"results": results})
	})
	// /secure scores 77, only for the bearer token "s3cret".
	mux.HandleFunc("POST /secure", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		_, _ = fmt.Fprint(w, `{"results": [{"metric": {}, "score": 77}]}`)
	})
	mux.HandleFunc("POST /flaky", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		mode := s.flaky
		s.mu.Unlock()
		switch mode {
		case "malformed":
			_, _ = fmt.Fprint(w, `{"results": [{"metric": {}, "score": "high"`)
		case "out-of-range":
			_, _ = fmt.Fprint(w, `{"results": [{"metric": {}, "score": 250}]}`)
		case "slow":
			select {
			case <-time.After(3 * time.Second):
			case <-r.Context().Done():
			}
			_, _ = fmt.Fprint(w, `{"results": [{"metric": {}, "score": 42}]}`)
		default:
			_, _ = fmt.Fprint(w, `{"results": [{"metric": {}, "score": 42}]}`)
		}
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *scorer) set(mode string) {
	s.mu.Lock()
	s.flaky = mode
	s.mu.Unlock()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
