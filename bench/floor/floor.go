package floor

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Key is a kind of write as the API server counts it in apiserver_request_total: the verb
// (POST, PUT, PATCH, APPLY, DELETE) and the resource, with "/subresource" when there is one
// ("placements/status").
type Key struct{ Verb, Resource string }

func (k Key) String() string { return k.Verb + " " + k.Resource }

// Writes counts writes by kind.
type Writes map[Key]float64

// Total is the number of writes.
func (w Writes) Total() float64 {
	var n float64
	for _, v := range w {
		n += v
	}
	return n
}

// String lists the writes by kind, sorted, for a benchmark's log.
func (w Writes) String() string { return list(w, "%s %.0f") }

// list formats each kind and its value of m with format, sorted, comma separated.
func list(m map[Key]float64, format string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf(format, k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// Rates is what the probe measured: writes per second the API server sustained, by kind.
type Rates map[Key]float64

// Time is how long the API server needs for writes w at rates r: the sum over kinds of count
// over rate. It is an error for w to hold a kind r has no rate for (probe it), so that no
// write is left out of a floor unnoticed.
func (r Rates) Time(w Writes) (time.Duration, error) {
	var s float64
	var missing []string
	for k, n := range w {
		if n == 0 {
			continue
		}
		rate, ok := r[k]
		if !ok || rate <= 0 {
			missing = append(missing, k.String())
			continue
		}
		s += n / rate
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return 0, fmt.Errorf("no write rate measured for %s: add a Target for its resource to the probe", strings.Join(missing, ", "))
	}
	return time.Duration(s * float64(time.Second)), nil
}

// Split divides w into the writes r has a rate for and those it has none for, so that a
// benchmark whose path also writes kinds it does not probe can say which it left out.
func (r Rates) Split(w Writes) (covered, missing Writes) {
	covered, missing = Writes{}, Writes{}
	for k, n := range w {
		if rate, ok := r[k]; ok && rate > 0 {
			covered[k] = n
		} else {
			missing[k] = n
		}
	}
	return covered, missing
}

// String lists the rates by kind, sorted, for a benchmark's log.
func (r Rates) String() string { return list(r, "%s %.0f/s") }

// Target is one resource the probe writes.
type Target struct {
	// Resource is its plural name as the API server counts it ("placements").
	Resource string
	// New returns the i-th object to create, namespaced in the probe's namespace (or cluster
	// scoped), with a name no other i shares.
	New func(i int) client.Object
	// SetStatus, when the resource has a status subresource, changes o's status to one that
	// depends on round (so that every status write changes the object); nil for a resource
	// without one (events).
	SetStatus func(o client.Object, round int)
}

// Options are the probe's.
type Options struct {
	// Objects is how many objects of each target each phase writes.
	Objects int
	// Workers is how many writers write at once: as many as the measured path's controller has.
	Workers int
}

// Probe measures the rates at which the API server behind cl takes, from opts.Workers writers,
// each target's creates (POST), updates (PUT, a label changed), merge patches (PATCH, a label
// changed), status updates (PUT of /status) and status merge patches (PATCH of /status), one
// kind of write at a time, opts.Objects writes each. Nothing watches the probe's objects, so its
// rates leave out what a controller's own watches cost the server: a floor no controller can
// reach, not one it should. It deletes what it created before it returns (not timed). Run it on the same API server
// as the benchmark, right before or after it, so that both see the same server and machine.
func Probe(ctx context.Context, cl client.Client, targets []Target, opts Options) (Rates, error) {
	if opts.Objects < 1 || opts.Workers < 1 {
		return nil, fmt.Errorf("floor.Probe: Objects %d and Workers %d must both be at least 1", opts.Objects, opts.Workers)
	}
	rates := Rates{}
	var created []client.Object
	defer func() {
		for _, o := range created {
			_ = cl.Delete(context.WithoutCancel(ctx), o)
		}
	}()
	for _, t := range targets {
		objs := make([]client.Object, opts.Objects)
		for i := range objs {
			objs[i] = t.New(i)
		}
		for _, ph := range phases(cl, t) {
			start := time.Now()
			err := each(len(objs), opts.Workers, func(i int) error { return ph.write(ctx, objs[i]) })
			if ph.key.Verb == "POST" {
				for _, o := range objs {
					if o.GetResourceVersion() != "" { // created by this probe
						created = append(created, o)
					}
				}
			}
			if err != nil {
				return nil, fmt.Errorf("floor.Probe: %s: %w", ph.key, err)
			}
			rates[ph.key] = float64(len(objs)) / time.Since(start).Seconds()
		}
	}
	return rates, nil
}

// phase is one kind of write the probe times.
type phase struct {
	key   Key
	write func(ctx context.Context, o client.Object) error
}

// phases are the writes the probe times for t, in order: create, update, merge patch (a label
// each, as a finalizer or an annotation is written), and with a status subresource, status
// update and status merge patch.
func phases(cl client.Client, t Target) []phase {
	out := []phase{
		{Key{"POST", t.Resource}, func(ctx context.Context, o client.Object) error { return cl.Create(ctx, o) }},
		{Key{"PUT", t.Resource}, func(ctx context.Context, o client.Object) error {
			l := o.GetLabels()
			if l == nil {
				l = map[string]string{}
			}
			l["floor.flotilla.io/probe"] = "updated"
			o.SetLabels(l)
			return cl.Update(ctx, o)
		}},
		{Key{"PATCH", t.Resource}, func(ctx context.Context, o client.Object) error {
			orig := o.DeepCopyObject().(client.Object)
			l := o.GetLabels()
			l["floor.flotilla.io/probe"] = "patched"
			o.SetLabels(l)
			return cl.Patch(ctx, o, client.MergeFrom(orig))
		}},
	}
	if t.SetStatus == nil {
		return out
	}
	return append(out,
		phase{Key{"PUT", t.Resource + "/status"}, func(ctx context.Context, o client.Object) error {
			t.SetStatus(o, 1)
			return cl.Status().Update(ctx, o)
		}},
		phase{Key{"PATCH", t.Resource + "/status"}, func(ctx context.Context, o client.Object) error {
			orig := o.DeepCopyObject().(client.Object)
			t.SetStatus(o, 2)
			return cl.Status().Patch(ctx, o, client.MergeFrom(orig))
		}})
}

// each calls f for 0..n-1 from workers goroutines and returns the first error.
func each(n, workers int, f func(i int) error) error {
	next := make(chan int)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}
