package federatedlearning

import (
	"bufio"
	"encoding/json"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ProgressMarker starts a line in which a server reports an aggregated round as JSON:
//
//	FLOTILLA_PROGRESS {"round":2,"rounds":5,"clients":["cluster-a","cluster-b"],"metrics":{"accuracy":0.83}}
//
// Flower's own log gives the round being run ("[ROUND 3/5]", "[ROUND 3]" before 1.2x) and the end ("Run finished 5
// round(s)"), but neither the clusters that took part nor, in a stable form, the metrics; the
// example app (examples/federated-learning) prints this line after each aggregation.
const ProgressMarker = "FLOTILLA_PROGRESS "

// maxRoundClients bounds status.progress.roundClients (the CRD's MaxItems).
const maxRoundClients = 100

// Progress is what a server's log says about the training.
type Progress struct {
	// Round is the last aggregated round, Rounds the number the server runs (0: not said).
	Round, Rounds int32
	// Metrics are the last round's aggregated metrics, formatted.
	Metrics map[string]string
	// RoundClients are, per reported round, the clusters that took part, sorted.
	RoundClients map[int32][]string
	// Finished: the server said the run is over; Failed, when set, says it failed and how.
	Finished bool
	Failed   string
	// Seen: the log held a line about rounds at all.
	Seen bool
}

var (
	flowerRound    = regexp.MustCompile(`\[ROUND (\d+)(?:/(\d+))?\]`)
	flowerFinished = regexp.MustCompile(`Run finished (\d+) round\(s\)`)
)

// progressLine is the JSON of a ProgressMarker line.
type progressLine struct {
	Round   int32              `json:"round"`
	Rounds  int32              `json:"rounds"`
	Clients []string           `json:"clients"`
	Metrics map[string]float64 `json:"metrics"`
}

// ParseProgress reads a server's log. Lines it does not know, and marker lines that are not
// valid JSON or name an impossible round, are skipped: the log is the app's, not ours to reject.
func ParseProgress(log string) Progress {
	p := Progress{RoundClients: map[int32][]string{}}
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, ProgressMarker); i >= 0 {
			var l progressLine
			if json.Unmarshal([]byte(line[i+len(ProgressMarker):]), &l) != nil || l.Round < 1 || (l.Rounds > 0 && l.Round > l.Rounds) {
				continue
			}
			p.Seen = true
			p.Round = max(p.Round, l.Round)
			if l.Rounds > 0 {
				p.Rounds = l.Rounds
			}
			clients := append([]string(nil), l.Clients...)
			sort.Strings(clients)
			p.RoundClients[l.Round] = clients
			if len(l.Metrics) > 0 && l.Round >= p.Round {
				p.Metrics = map[string]string{}
				for k, v := range l.Metrics {
					p.Metrics[k] = strconv.FormatFloat(v, 'g', 4, 64)
				}
			}
			continue
		}
		if m := flowerFinished.FindStringSubmatch(line); m != nil {
			if n, err := strconv.ParseInt(m[1], 10, 32); err == nil {
				p.Seen, p.Finished = true, true
				p.Round = max(p.Round, int32(n))
			}
			continue
		}
		if m := flowerRound.FindStringSubmatch(line); m != nil {
			// Round N is under way: N-1 rounds are aggregated.
			if n, err := strconv.ParseInt(m[1], 10, 32); err == nil && n >= 1 {
				p.Seen = true
				p.Round = max(p.Round, int32(n)-1)
				if total, err := strconv.ParseInt(m[2], 10, 32); err == nil && total >= n {
					p.Rounds = int32(total)
				}
			}
		}
	}
	for len(p.RoundClients) > maxRoundClients {
		oldest := int32(-1)
		for r := range p.RoundClients {
			if oldest < 0 || r < oldest {
				oldest = r
			}
		}
		delete(p.RoundClients, oldest)
	}
	return p
}
