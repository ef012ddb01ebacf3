package federatedlearning

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseProgress(t *testing.T) {
	cases := map[string]struct {
		log  string
		want Progress
	}{
		"nothing yet": {
			log:  "INFO : Starting Flower ServerApp\n",
			want: Progress{RoundClients: map[int32][]string{}},
		},
		"flower 1.42's lines": {
			log:  "INFO :      [ROUND 1/5]\nINFO :      [ROUND 2/5]\n",
			want: Progress{Round: 1, Rounds: 5, Seen: true, RoundClients: map[int32][]string{}},
		},
		"flower's own lines": {
			log:  "INFO :      [ROUND 1]\nINFO :      configure_train: Sampled 3 nodes\nINFO :      [ROUND 2]\n",
			want: Progress{Round: 1, Seen: true, RoundClients: map[int32][]string{}},
		},
		"marker lines and the end": {
			log: strings.Join([]string{
				"INFO :      [ROUND 1]",
				`FLOTILLA_PROGRESS {"round":1,"rounds":3,"clients":["b","a"],"metrics":{"accuracy":0.5}}`,
				"INFO :      [ROUND 2]",
				`FLOTILLA_PROGRESS {"round":2,"rounds":3,"clients":["a"],"metrics":{"accuracy":0.75,"loss":0.123456}}`,
				"INFO :      Run finished 3 round(s) in 4.20s",
			}, "\n"),
			want: Progress{Round: 3, Rounds: 3, Seen: true, Finished: true,
				Metrics:      map[string]string{"accuracy": "0.75", "loss": "0.1235"},
				RoundClients: map[int32][]string{1: {"a", "b"}, 2: {"a"}}},
		},
		"bad marker lines are skipped": {
			log: strings.Join([]string{
				`FLOTILLA_PROGRESS {"round":`,
				`FLOTILLA_PROGRESS {"round":0}`,
				`FLOTILLA_PROGRESS {"round":9,"rounds":3}`,
				`FLOTILLA_PROGRESS ["not", "an", "object"]`,
			}, "\n"),
			want: Progress{RoundClients: map[int32][]string{}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ParseProgress(tc.log)); diff != "" {
				t.Errorf("ParseProgress (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseProgressKeepsTheLastRounds(t *testing.T) {
	var b strings.Builder
	for r := 1; r <= maxRoundClients+20; r++ {
		b.WriteString(`FLOTILLA_PROGRESS {"round":` + itoa(r) + `,"clients":["a"]}` + "\n")
	}
	p := ParseProgress(b.String())
	if len(p.RoundClients) != maxRoundClients {
		t.Fatalf("kept %d rounds, want %d", len(p.RoundClients), maxRoundClients)
	}
	if _, ok := p.RoundClients[21]; !ok {
		t.Errorf("round 21 (the oldest of the last %d) is missing", maxRoundClients)
	}
	if _, ok := p.RoundClients[20]; ok {
		t.Errorf("round 20 should have been dropped")
	}
}

func FuzzParseProgress(f *testing.F) {
	f.Add(`FLOTILLA_PROGRESS {"round":1,"rounds":3,"clients":["a"],"metrics":{"accuracy":0.5}}`)
	f.Add("[ROUND 7]\nRun finished 7 round(s)")
	f.Fuzz(func(t *testing.T, log string) {
		p := ParseProgress(log)
		if p.Round < 0 || len(p.RoundClients) > maxRoundClients || len(p.Metrics) > 0 && !p.Seen {
			t.Fatalf("impossible progress %+v", p)
		}
	})
}
