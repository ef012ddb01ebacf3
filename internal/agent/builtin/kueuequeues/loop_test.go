package kueuequeues

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/flotilla/flotilla/internal/agent/builtin"
	"github.com/flotilla/flotilla/internal/contract/gpuflavor"
)

// recorder is an applier that hands each Desired to the test.
type recorder struct {
	applied chan Desired
	err     error
}

func (r *recorder) apply(_ context.Context, d Desired) (int, error) {
	err := r.err
	r.applied <- d
	return 1, err
}

// gpus is the GPU quota of the flavor of model in d, "" without one.
func gpus(d Desired, model string) string {
	name := gpuflavor.Names([]string{model})[model]
	for _, f := range d.ClusterQueue.Spec.ResourceGroups[0].Flavors {
		if string(f.Name) == name {
			return f.Resources[2].NominalQuota.String()
		}
	}
	return ""
}

// TestLoop: the objects are written at once, then a debounce after a change (the changes of that
// time together), not when the nodes changed but call for the same objects, and every resync.
func TestLoop(t *testing.T) {
	const debounce, resync = time.Second, time.Minute
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	store := newNodeStore()
	if err := store.Replace([]any{node("h1", h100, 8, "64", "512Gi")}, "1"); err != nil {
		t.Fatal(err)
	}
	<-store.changed // the first list's change: the loop looks at the nodes at once anyway
	rec := &recorder{applied: make(chan Desired, 10)}
	evaluated := make(chan struct{}, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- AddOn{Debounce: debounce, Resync: resync}.loop(ctx, builtin.Env{ClusterName: "c", Clock: clk, Log: testr.New(t)},
			store, rec, func() { evaluated <- struct{}{} })
	}()
	// step moves the clock on once the loop waits on a debounce timer (wantTimer) or on its
	// resync ticker only, and returns what the loop then wrote, if it looked at the nodes.
	step := func(what string, d time.Duration, wantTimer bool) (written *Desired) {
		t.Helper()
		want := 1
		if wantTimer {
			want = 2
		}
		deadline := time.Now().Add(10 * time.Second)
		for clk.Waiters() != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the loop waits on %d timers, want %d", what, clk.Waiters(), want)
			}
			time.Sleep(time.Millisecond)
		}
		clk.Step(d)
		select {
		case <-evaluated:
		case <-time.After(100 * time.Millisecond):
			return nil
		}
		select {
		case d := <-rec.applied:
			return &d
		default:
			return nil
		}
	}
	wrote := func(what string, d *Desired, wantGPUs string) {
		t.Helper()
		switch {
		case d == nil && wantGPUs != "":
			t.Fatalf("%s: nothing written, want %s H100 GPUs", what, wantGPUs)
		case d != nil && wantGPUs == "":
			t.Fatalf("%s: written with %s H100 GPUs, want nothing written", what, gpus(*d, h100))
		case d != nil && gpus(*d, h100) != wantGPUs:
			t.Fatalf("%s: written with %s H100 GPUs, want %s", what, gpus(*d, h100), wantGPUs)
		}
	}
	<-evaluated
	wrote("at the start", ptr(<-rec.applied), "8")

	// A node replaced by one like it: the store changed, the objects did not.
	if err := store.Delete(node("h1", h100, 8, "64", "512Gi")); err != nil {
		t.Fatal(err)
	}
	if err := store.Add(node("h1-new", h100, 8, "64", "512Gi")); err != nil {
		t.Fatal(err)
	}
	wrote("the node replaced", step("the node replaced", debounce, true), "")

	// Two nodes added within a debounce: written together, a debounce after the first.
	if err := store.Add(node("h2", h100, 8, "64", "512Gi")); err != nil {
		t.Fatal(err)
	}
	wrote("before the debounce passed", step("a node added", debounce-time.Millisecond, true), "")
	if err := store.Add(node("h3", h100, 8, "64", "512Gi")); err != nil {
		t.Fatal(err)
	}
	wrote("a debounce after the first change", step("a second node added", time.Millisecond, true), "24")

	// The resync writes though nothing changed.
	wrote("at the resync", step("resync", resync, false), "24")

	// A failed write ends the loop with its error.
	rec.err = errors.New("refused")
	clk.Step(resync)
	select {
	case d := <-rec.applied:
		wrote("at the next resync", &d, "24")
	case <-time.After(10 * time.Second):
		t.Fatal("nothing written at the next resync")
	}
	select {
	case err := <-done:
		if !errors.Is(err, rec.err) {
			t.Errorf("the loop ended with %v, want %v", err, rec.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the loop went on after a failed write")
	}
}

func ptr(d Desired) *Desired { return &d }
