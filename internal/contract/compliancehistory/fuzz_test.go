package compliancehistory

import "testing"

// FuzzParse reads a history ConfigMap, which anyone who may edit ConfigMaps in the policy's
// namespace can write: it never panics, and what it reads formats and reads back the same.
func FuzzParse(f *testing.F) {
	f.Add("2026-12-06T10:00:00Z gpu-west Compliant\n2026-12-06T11:00:00Z gpu-west NonCompliant\n")
	f.Add("x y z\n\n\t")
	f.Fuzz(func(t *testing.T, data string) {
		entries, _ := Parse(data)
		again, skipped := Parse(Format(entries))
		if skipped != 0 || len(again) != len(entries) {
			t.Fatalf("formatted entries do not read back: %d of %d, %d skipped", len(again), len(entries), skipped)
		}
		_ = Periods(entries)
	})
}
