// This command is a sample scorer for Flotilla's dynamic scoring (OCM contrib's DynamicScorer):
// it scores clusters by GPU utilization, so that placements prefer idle GPUs.
//
// It serves /healthz, /config (the configuration the hub syncs with configSyncMode Full) and
// /scoring, which takes the agent's {"data":[<Prometheus matrix>]} and answers
// {"results":[{"metric":{...},"score":N}]}: one score per series, 100 - 2 x the series' mean
// utilization in percent, clamped to -100..100 (idle 100, half busy 0, fully busy -100).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"net/http"
	"strconv"
	"time"
)

// Config is what /config serves: OCM contrib's scorer configuration.
type Config struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Source      Source  `json:"source"`
	Scoring     Scoring `json:"scoring"`
}

// Source is the metrics source the agent queries.
type Source struct {
	Type   string       `json:"type"`
	Host   string       `json:"host,omitempty"`
	Path   string       `json:"path"`
	Params SourceParams `json:"params"`
}

// SourceParams is a Prometheus range query.
type SourceParams struct {
	Query string `json:"query"`
	Range int64  `json:"range"`
	Step  int64  `json:"step"`
}

// Scoring is the scoring API the agent calls.
type Scoring struct {
	Host   string        `json:"host,omitempty"`
	Path   string        `json:"path"`
	Params ScoringParams `json:"params"`
}

// ScoringParams name the score and set its interval.
type ScoringParams struct {
	Name     string `json:"name"`
	Interval int64  `json:"interval"`
}

// Series is one series of a Prometheus matrix.
type Series struct {
	Metric map[string]string `json:"metric"`
	Values [][2]any          `json:"values"`
}

// Result is one score.
type Result struct {
	Metric map[string]string `json:"metric"`
	Score  float64           `json:"score"`
}

// DefaultQuery is the mean GPU utilization of the cluster, from NVIDIA's DCGM exporter.
const DefaultQuery = "avg(DCGM_FI_DEV_GPU_UTIL)"

// Score is 100 - 2 x the mean of a series' values (percent), clamped to -100..100 and rounded;
// ok is false when the series has no numeric value.
func Score(s Series) (score float64, ok bool) {
	sum, n := 0.0, 0
	for _, v := range s.Values {
		str, isStr := v[1].(string)
		if !isStr {
			continue
		}
		f, err := strconv.ParseFloat(str, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		sum, n = sum+f, n+1
	}
	if n == 0 {
		return 0, false
	}
	return math.Round(math.Max(-100, math.Min(100, 100-2*sum/float64(n)))), true
}

// Handler serves /healthz, /config and /scoring with cfg.
func Handler(cfg Config) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /config", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, cfg) })
	mux.HandleFunc("POST "+cfg.Scoring.Path, func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Data []Series `json:"data"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<20)).Decode(&req); err != nil {
			http.Error(w, "want {\"data\":[<Prometheus matrix>]}: "+err.Error(), http.StatusBadRequest)
			return
		}
		results := []Result{}
		for _, s := range req.Data {
			if v, ok := Score(s); ok {
				results = append(results, Result{Metric: s.Metric, Score: v})
			}
		}
		writeJSON(w, map[string]any{"results": results})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		log.Printf("writing the answer: %v", err)
	}
}

func main() {
	addr := flag.String("addr", ":8080", "address to serve on")
	prom := flag.String("prometheus", "", "Prometheus URL the agents query (empty: the DynamicScorer's spec.source.host)")
	query := flag.String("query", DefaultQuery, "PromQL query of GPU utilization in percent")
	name := flag.String("score-name", "gpu-utilization", "score name (and AddOnPlacementScore name)")
	interval := flag.Int64("interval", 30, "scoring interval in seconds")
	flag.Parse()
	cfg := Config{
		Name: *name, Description: "scores clusters by GPU utilization: 100 - 2 x mean utilization (%)",
		Source:  Source{Type: "Prometheus", Host: *prom, Path: "/api/v1/query_range", Params: SourceParams{Query: *query, Range: 300, Step: 30}},
		Scoring: Scoring{Path: "/scoring", Params: ScoringParams{Name: *name, Interval: *interval}},
	}
	srv := &http.Server{Addr: *addr, Handler: Handler(cfg), ReadHeaderTimeout: 10 * time.Second}
	log.Printf("serving the GPU utilization scorer on %s", *addr)
	log.Fatal(srv.ListenAndServe())
}
