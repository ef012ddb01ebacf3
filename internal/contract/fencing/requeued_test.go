package fencing

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWithRequeued(t *testing.T) {
	many := make([]string, MaxRequeuedNames+2)
	for i := range many {
		many[i] = fmt.Sprintf("team/w-%d", i)
	}
	for name, tc := range map[string]struct {
		prev  Requeued
		epoch int64
		names []string
		want  Requeued
	}{
		"a first pass":                     {epoch: 2, names: []string{"team/a"}, want: Requeued{Epoch: 2, Workloads: []string{"team/a"}}},
		"a later pass of the same loss":    {prev: Requeued{Epoch: 2, Workloads: []string{"team/a"}}, epoch: 2, names: []string{"team/b", "team/a"}, want: Requeued{Epoch: 2, Workloads: []string{"team/a", "team/b"}}},
		"a new loss starts a new record":   {prev: Requeued{Epoch: 2, Workloads: []string{"team/a"}, More: 4}, epoch: 3, names: []string{"team/c"}, want: Requeued{Epoch: 3, Workloads: []string{"team/c"}}},
		"beyond the bound only counts":     {epoch: 1, names: many, want: Requeued{Epoch: 1, Workloads: many[:MaxRequeuedNames], More: 2}},
		"a pass with nothing new keeps it": {prev: Requeued{Epoch: 1, Workloads: []string{"team/a"}}, epoch: 1, want: Requeued{Epoch: 1, Workloads: []string{"team/a"}}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, WithRequeued(tc.prev, tc.epoch, tc.names)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequeuedOf(t *testing.T) {
	for name, tc := range map[string]struct {
		value   string
		want    Requeued
		wantErr bool
	}{
		"a record":        {value: `{"epoch":2,"workloads":["team/a"]}`, want: Requeued{Epoch: 2, Workloads: []string{"team/a"}}},
		"not JSON":        {value: "team/a", wantErr: true},
		"a negative more": {value: `{"epoch":2,"workloads":[],"more":-1}`, wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok, err := RequeuedOf(map[string]string{AnnotationRequeued: tc.value})
			if (err != nil) != tc.wantErr || ok == tc.wantErr {
				t.Fatalf("RequeuedOf(%q) = %v, %v, want error %v", tc.value, ok, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
