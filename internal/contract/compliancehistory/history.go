package compliancehistory

import (
	"fmt"
	"slices"
	"strings"
	"time"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
)

// Key is the ConfigMap data key that holds the entries, one per line, oldest first.
const Key = "transitions"

// Label marks a history ConfigMap as the hub's, with the policy's name as its value: the hub
// never writes a ConfigMap without it.
const Label = "policy.flotilla.io/compliance-history"

// MaxEntries bounds a policy's history: at about 50 bytes an entry it stays well within a
// ConfigMap's 1 MiB.
const MaxEntries = 10000

// Gone is the state of a cluster the policy is no longer placed on.
const Gone policyv1.ComplianceState = "Unplaced"

// Name is the history ConfigMap of root policy name.
func Name(policy string) string { return policy + ".compliance-history" }

// Entry is one change of a cluster's compliance.
type Entry struct {
	At      time.Time
	Cluster string
	State   policyv1.ComplianceState
}

func (e Entry) String() string {
	state := string(e.State)
	if state == "" {
		state = "-"
	}
	return e.At.UTC().Format(time.RFC3339) + " " + e.Cluster + " " + state
}

// Parse reads the entries of data; lines it cannot read are skipped and counted.
func Parse(data string) (entries []Entry, skipped int) {
	for _, line := range strings.Split(data, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			skipped++
			continue
		}
		at, err := time.Parse(time.RFC3339, f[0])
		if err != nil {
			skipped++
			continue
		}
		state := policyv1.ComplianceState(f[2])
		if state == "-" {
			state = ""
		}
		entries = append(entries, Entry{At: at, Cluster: f[1], State: state})
	}
	return entries, skipped
}

// Format writes entries, the last MaxEntries of them.
func Format(entries []Entry) string {
	if len(entries) > MaxEntries {
		entries = entries[len(entries)-MaxEntries:]
	}
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// Last is each cluster's latest state in entries.
func Last(entries []Entry) map[string]policyv1.ComplianceState {
	out := map[string]policyv1.ComplianceState{}
	for _, e := range entries {
		out[e.Cluster] = e.State
	}
	return out
}

// Changes are the entries that take last (each cluster's recorded state) to now (each placed
// cluster's state; a cluster last seen placed and not in now is Gone), at the times given by at
// (a cluster's report time; now's time when it has none), sorted by time and cluster.
func Changes(last, now map[string]policyv1.ComplianceState, at func(cluster string) time.Time) []Entry {
	var out []Entry
	for c, s := range now {
		if prev, ok := last[c]; !ok || prev != s {
			if !ok && s == "" {
				continue // placed, not reported yet: nothing to record
			}
			out = append(out, Entry{At: at(c), Cluster: c, State: s})
		}
	}
	for c, s := range last {
		if _, placed := now[c]; !placed && s != Gone {
			out = append(out, Entry{At: at(c), Cluster: c, State: Gone})
		}
	}
	slices.SortFunc(out, func(a, b Entry) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return strings.Compare(a.Cluster, b.Cluster)
	})
	return out
}

// Period is a time a cluster spent in one state; an open period has no End.
type Period struct {
	Cluster    string
	State      policyv1.ComplianceState
	Start, End time.Time
}

// Duration is the period's length, up to now when it is open.
func (p Period) Duration(now time.Time) time.Duration {
	end := p.End
	if end.IsZero() {
		end = now
	}
	return end.Sub(p.Start)
}

func (p Period) String() string {
	end := "now"
	if !p.End.IsZero() {
		end = p.End.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("%s %s from %s to %s", p.Cluster, p.State, p.Start.UTC().Format(time.RFC3339), end)
}

// Periods turns entries (oldest first) into each cluster's periods, in the order they started.
func Periods(entries []Entry) []Period {
	var out []Period
	open := map[string]int{} // cluster -> index of its open period
	for _, e := range entries {
		if i, ok := open[e.Cluster]; ok {
			out[i].End = e.At
			delete(open, e.Cluster)
		}
		if e.State == Gone {
			continue
		}
		open[e.Cluster] = len(out)
		out = append(out, Period{Cluster: e.Cluster, State: e.State, Start: e.At})
	}
	return out
}
