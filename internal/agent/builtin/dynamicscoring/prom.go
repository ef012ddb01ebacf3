package dynamicscoring

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Queries splits a source query at semicolons, as OCM contrib's agent, dropping empty parts.
func Queries(query string) []string {
	var out []string
	for _, q := range strings.Split(query, ";") {
		if q = strings.TrimSpace(q); q != "" {
			out = append(out, q)
		}
	}
	return out
}

// promResponse is the Prometheus HTTP API's answer.
type promResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string   `json:"resultType"`
		Result     []Series `json:"result"`
	} `json:"data"`
}

// ParseMatrix reads a Prometheus range query's answer; an error answer (a bad query is
// "bad_data") gives Prometheus's message.
func ParseMatrix(status int, body []byte) ([]Series, error) {
	var r promResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("HTTP %d, not a Prometheus API answer: %.200s", status, body)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("HTTP %d, %s: %s", status, r.ErrorType, r.Error)
	}
	if r.Data.ResultType != "matrix" {
		return nil, fmt.Errorf("the answer is a %q, not a matrix: is the path the range query API /api/v1/query_range?", r.Data.ResultType)
	}
	return r.Data.Result, nil
}
