package federatedlearning

import (
	"testing"
	"time"

	"github.com/flotilla/flotilla/internal/hub/flowerctl"
)

// On a shared SuperLink a federation's run is the first one after its creation that names its
// UID; newer runs of other tenants, runs naming no federation, and a later run that copies the
// UID are not it, and a recorded run stays.
func TestPickRun(t *testing.T) {
	created := time.Date(2026, 8, 4, 10, 0, 0, 0, time.UTC)
	run := func(id uint64, at, uid string) flowerctl.Run {
		r := flowerctl.Run{ID: id, PendingAt: at}
		if uid != "" {
			r.OverrideConfig = map[string]string{RunConfigKey: uid}
		}
		return r
	}
	before := run(1, "2026-08-04T09:59:00+00:00", "uid-a")
	mine := run(90, "2026-08-04T10:01:00.000100+00:00", "uid-a")
	copycat := run(3, "2026-08-04T10:01:00.000200+00:00", "uid-a") // a lower ID, submitted later
	theirs := run(500, "2026-08-04T10:05:00+00:00", "uid-b")
	untagged := run(700, "2026-08-04T10:06:00+00:00", "")
	cases := map[string]struct {
		runs   []flowerctl.Run
		bound  string
		wantID uint64 // 0: none
	}{
		"nothing names the federation":            {runs: []flowerctl.Run{theirs, untagged}},
		"before the federation was created":       {runs: []flowerctl.Run{before}},
		"its own run among others' newer ones":    {runs: []flowerctl.Run{untagged, theirs, mine}, wantID: 90},
		"a copy of its UID submitted later loses": {runs: []flowerctl.Run{copycat, mine}, wantID: 90},
		"the recorded run stays":                  {runs: []flowerctl.Run{mine, copycat}, bound: "3", wantID: 3},
		"a recorded run that does not name it":    {runs: []flowerctl.Run{theirs}, bound: "500"},
		"the recorded run is not listed":          {runs: []flowerctl.Run{mine}, bound: "42"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := pickRun(tc.runs, "uid-a", created, tc.bound)
			var gotID uint64
			if got != nil {
				gotID = got.ID
			}
			if gotID != tc.wantID {
				t.Errorf("pickRun = run %d, want %d", gotID, tc.wantID)
			}
		})
	}
}
