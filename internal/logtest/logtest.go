package logtest

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// Recorder keeps the log entries of the loggers it made, decoded.
type Recorder struct {
	// Echo also writes every line to the test's log.
	Echo bool

	mu      sync.Mutex
	entries []map[string]any
}

// Logger is a logger whose entries r keeps; an entry that is not JSON fails t.
func (r *Recorder) Logger(t testing.TB, opts funcr.Options) logr.Logger {
	return funcr.NewJSON(func(line string) {
		if r.Echo {
			t.Log(line)
		}
		e := map[string]any{}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Errorf("log line %q is not JSON: %v", line, err)
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.entries = append(r.entries, e)
	}, opts)
}

// Find returns the entries whose message contains msg (every entry for "").
func (r *Recorder) Find(msg string) []map[string]any {
	return r.match(func(e map[string]any) bool { return strings.Contains(message(e), msg) })
}

// Failures returns the error entries whose message contains msg.
func (r *Recorder) Failures(msg string) []map[string]any {
	return r.match(func(e map[string]any) bool { return e["error"] != nil && strings.Contains(message(e), msg) })
}

// Last formats the last n entries, a line each, for failure messages.
func (r *Recorder) Last(n int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, e := range r.entries[max(0, len(r.entries)-n):] {
		line, _ := json.Marshal(e)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func (r *Recorder) match(keep func(map[string]any) bool) []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]any
	for _, e := range r.entries {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

func message(e map[string]any) string {
	m, _ := e["msg"].(string)
	return m
}
