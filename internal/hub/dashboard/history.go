package dashboard

import (
	"cmp"
	"context"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/hub/fleetview"
)

// Defaults of the GPU history: a sample a minute for the last six hours.
const (
	DefaultHistoryInterval = time.Minute
	DefaultHistorySamples  = 360
	// maxHistoryModels bounds the models a sample keeps (the most allocatable first), so that a
	// fleet whose nodes name thousands of models cannot grow the history without bound.
	maxHistoryModels = 32
	// maxHistoryShares bounds the (FleetQueue, team, model) figures a sample keeps, the
	// FleetQueues by name: 64 teams of 16 models fit.
	maxHistoryShares = 1024
)

// History keeps, at a fixed interval, in memory, for the last Samples samples, the fleet's GPU
// totals per model (allocatable, and free over the clusters whose figures are current: what the
// GPU view draws as free GPUs over time) and each FleetQueue team's GPUs held and fair share per
// model (what the queue view draws). It reads with its own client: the hub's cache in `flotilla
// hub`, the kubeconfig's identity in `flotilla dashboard`. The API shows each part only to a
// viewer who may list every object it adds up (gpuHistory, queues), who could add them up alike.
type History struct {
	// Queues says whether to sample FleetQueues (NewHistory sets it): the hub turns it off when
	// it started without Kueue, whose kinds its cache then has no informers for.
	Queues bool

	reader   client.Reader
	clock    clock.WithTicker
	interval time.Duration
	samples  int

	mu   sync.Mutex
	ring []historySample // oldest first
}

type historySample struct {
	at     time.Time
	models []fleetview.ModelTotal
	shares []teamShare
}

// teamShare is one team's GPUs of one model at a sample.
type teamShare struct {
	queue, team, model string
	used               int64
	fair               float64
}

// NewHistory returns a history that samples r every interval and keeps samples of them.
func NewHistory(r client.Reader, clk clock.WithTicker, interval time.Duration, samples int) *History {
	return &History{Queues: true, reader: r, clock: clk, interval: interval, samples: samples}
}

// Start samples until ctx ends (a manager.Runnable: every hub replica keeps its own).
func (h *History) Start(ctx context.Context) error {
	t := h.clock.NewTicker(h.interval)
	defer t.Stop()
	for {
		if err := h.Sample(ctx); err != nil && ctx.Err() == nil {
			log.FromContext(ctx).Info("the dashboard's GPU history missed a sample", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// NeedLeaderElection is false: every replica serves the dashboard, so every one keeps a history.
func (h *History) NeedLeaderElection() bool { return false }

// Sample reads the fleet once and records its totals.
func (h *History) Sample(ctx context.Context) error {
	clusters, err := allClusters(ctx, h.reader)
	if err != nil {
		return err
	}
	var usages usagev1alpha1.ResourceUsageList
	if err := h.reader.List(ctx, &usages); err != nil {
		return err
	}
	now := h.clock.Now()
	report := fleetview.GPUReport(clusters, usages.Items, "", false, now)
	sample := historySample{at: now, models: topModels(report.Models)}
	var qerr error
	if h.Queues {
		// Without Kueue on the hub there are no queues to sample.
		var queues []fleetview.QueueView
		queues, qerr = fleetview.ReadQueues(ctx, h.reader)
		if meta.IsNoMatchError(qerr) {
			qerr = nil
		}
		sample.shares = shares(queues)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ring = record(h.ring, sample, h.samples)
	return qerr
}

// shares are the teams' figures of views, at most maxHistoryShares: per team, each model it holds
// GPUs of or has a fair share of.
func shares(views []fleetview.QueueView) []teamShare {
	var out []teamShare
	for _, v := range views {
		for _, t := range v.Teams {
			models := map[string]bool{}
			for m := range t.Used {
				models[m] = true
			}
			for m := range t.Fair {
				models[m] = true
			}
			for _, m := range slices.Sorted(maps.Keys(models)) {
				if len(out) == maxHistoryShares {
					return out
				}
				out = append(out, teamShare{queue: v.Name, team: t.Name, model: m, used: t.Used[m], fair: t.Fair[m]})
			}
		}
	}
	return out
}

// record appends s to ring, dropping the oldest beyond capacity.
func record(ring []historySample, s historySample, capacity int) []historySample {
	ring = append(ring, s)
	if over := len(ring) - capacity; over > 0 {
		ring = append(ring[:0], ring[over:]...)
	}
	return ring
}

// topModels keeps the maxHistoryModels models with the most allocatable GPUs.
func topModels(models []fleetview.ModelTotal) []fleetview.ModelTotal {
	if len(models) <= maxHistoryModels {
		return models
	}
	out := append([]fleetview.ModelTotal(nil), models...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Allocatable > out[j].Allocatable })
	return out[:maxHistoryModels]
}

// GPUSeries is the history of one model.
type GPUSeries struct {
	Model  string     `json:"model"`
	Points []GPUPoint `json:"points"`
}

// GPUPoint is one sample of a model: absent models count zero.
type GPUPoint struct {
	Time        time.Time `json:"time"`
	Allocatable int64     `json:"allocatable"`
	Free        int64     `json:"free"`
}

// GPUHistoryPage is the answer of GET /api/gpus/history.
type GPUHistoryPage struct {
	IntervalSeconds int64       `json:"intervalSeconds"`
	Samples         int         `json:"samples"`
	Models          []GPUSeries `json:"models"`
}

// Series are the samples per model, by model name, each with a point per sample.
func (h *History) Series() []GPUSeries {
	h.mu.Lock()
	defer h.mu.Unlock()
	return series(h.ring)
}

func series(ring []historySample) []GPUSeries {
	cols := columns(ring, func(s historySample, put func(string, GPUPoint)) {
		for _, m := range s.models {
			put(m.Model, GPUPoint{Allocatable: m.Allocatable, Free: m.Free})
		}
	})
	out := make([]GPUSeries, 0, len(cols))
	for model, points := range cols {
		for j := range points {
			points[j].Time = ring[j].at.UTC()
		}
		out = append(out, GPUSeries{Model: model, Points: points})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Model < out[j].Model })
	return out
}

// columns turns ring into a column per key its samples name (each calls put for its keys), with
// a value per sample: the zero value where a sample lacks the key.
func columns[K comparable, V any](ring []historySample, each func(s historySample, put func(K, V))) map[K][]V {
	out := map[K][]V{}
	for i, s := range ring {
		each(s, func(k K, v V) {
			col, ok := out[k]
			if !ok {
				col = make([]V, len(ring))
				out[k] = col
			}
			col[i] = v
		})
	}
	return out
}

// ShareSeries is the history of one team's GPUs of one model in a FleetQueue.
type ShareSeries struct {
	Team string `json:"team"`
	// Model is the model, "" for the team's fair share of GPUs of any model.
	Model  string       `json:"model"`
	Points []SharePoint `json:"points"`
}

// SharePoint is one sample: absent figures count zero.
type SharePoint struct {
	Time time.Time `json:"time"`
	Used int64     `json:"used"`
	Fair float64   `json:"fair"`
}

// QueueSeries are a FleetQueue's series, by team and model.
func (h *History) QueueSeries(queue string) []ShareSeries {
	h.mu.Lock()
	defer h.mu.Unlock()
	return queueSeries(h.ring, queue)
}

func queueSeries(ring []historySample, queue string) []ShareSeries {
	type key struct{ team, model string }
	cols := columns(ring, func(s historySample, put func(key, SharePoint)) {
		for _, x := range s.shares {
			if x.queue == queue {
				put(key{x.team, x.model}, SharePoint{Used: x.used, Fair: x.fair})
			}
		}
	})
	out := make([]ShareSeries, 0, len(cols))
	for k, points := range cols {
		for j := range points {
			points[j].Time = ring[j].at.UTC()
		}
		out = append(out, ShareSeries{Team: k.team, Model: k.model, Points: points})
	}
	slices.SortFunc(out, func(a, b ShareSeries) int {
		return cmp.Or(strings.Compare(a.Team, b.Team), strings.Compare(a.Model, b.Model))
	})
	return out
}

// gpuHistory answers GET /api/gpus/history: the recorded totals, to a viewer who may list
// ManagedClusters and every namespace's ResourceUsages (the reads that add up to the totals),
// checked with the viewer's identity on every request.
func (s *Server) gpuHistory(w http.ResponseWriter, r *http.Request) {
	_, c, ok := s.begin(w, r)
	if !ok {
		return
	}
	if s.o.History == nil {
		writeError(w, notFound("this dashboard keeps no GPU history (it was started without one)"))
		return
	}
	for _, l := range []client.ObjectList{&clusterv1.ManagedClusterList{}, &usagev1alpha1.ResourceUsageList{}} {
		if err := c.List(ctx(r), l, client.Limit(1)); err != nil {
			e := hubError(err, "checking that you may read every cluster's GPU figures")
			if e.Code == http.StatusForbidden {
				e.Message += ": the GPU history adds up every cluster's figures, so it is shown only to viewers who may list managedclusters and resourceusages in every namespace"
			}
			writeError(w, e)
			return
		}
	}
	writeJSON(w, http.StatusOK, GPUHistoryPage{IntervalSeconds: int64(s.o.History.interval / time.Second), Samples: s.o.History.samples, Models: s.o.History.Series()})
}
