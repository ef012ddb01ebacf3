package queuesim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestWaterFill(t *testing.T) {
	w211 := []float64{2, 1, 1}
	cases := []struct {
		name     string
		capacity float64
		demand   []float64
		want     []float64
	}{
		{"every team asks more than its part: 2:1:1", 40, []float64{100, 100, 100}, []float64{20, 10, 10}},
		{"a team asking less leaves the rest to the others by weight", 40, []float64{100, 4, 100}, []float64{24, 4, 12}},
		{"enough for all: each gets its demand", 40, []float64{10, 5, 5}, []float64{10, 5, 5}},
		{"a team asking nothing gets nothing", 40, []float64{0, 100, 100}, []float64{0, 20, 20}},
		{"no capacity", 0, []float64{5, 5, 5}, []float64{0, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, WaterFill(c.capacity, c.demand, w211), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("WaterFill (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFairShares(t *testing.T) {
	capacity := map[string]float64{H100.Name: 16, T4.Name: 8}
	weights := []float64{2, 1, 1}
	cases := []struct {
		name    string
		demand  []map[string]float64
		want    []float64
		byModel []map[string]float64
	}{
		{"model by model: only b wants T4, all want H100",
			[]map[string]float64{{H100.Name: 32}, {H100.Name: 32, T4.Name: 8}, {H100.Name: 32}},
			[]float64{8, 4 + 8, 4},
			[]map[string]float64{{H100.Name: 8}, {H100.Name: 4, T4.Name: 8}, {H100.Name: 4}}},
		{"jobs for any model share what the models leave (8 T4 unwanted)",
			[]map[string]float64{{H100.Name: 32}, {"": 100}, {H100.Name: 2}},
			[]float64{14, 8, 2},
			[]map[string]float64{{H100.Name: 14}, {"": 8}, {H100.Name: 2}}},
		{"no demand, no share",
			[]map[string]float64{{}, {}, {}},
			[]float64{0, 0, 0},
			[]map[string]float64{{}, {}, {}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, FairShares(capacity, c.demand, weights), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("FairShares (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.byModel, FairSharesByModel(capacity, c.demand, weights), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("FairSharesByModel (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJainOf(t *testing.T) {
	got := []float64{JainOf([]float64{1, 1, 1}), JainOf([]float64{3, 0, 0}), JainOf([]float64{0, 0})}
	if diff := cmp.Diff([]float64{1, 1.0 / 3, 0}, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("JainOf (-want +got):\n%s", diff)
	}
}
