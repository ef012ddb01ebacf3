package placementview

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler"
)

// Explanation is a placement scheduled now, with the hub's scheduling core, against the hub's
// objects, and the decisions the hub holds for it.
type Explanation struct {
	Placement *clusterv1beta1.Placement
	Result    scheduler.Result
	// CurrentDecisions are the clusters of the hub's PlacementDecisions of the placement, sorted.
	CurrentDecisions []string
}

// Compute reads placement ns/name and the fleet with c and schedules it, as `flotilla explain
// placement` and `flotilla mcp` explain it. A missing placement is an error apierrors.IsNotFound
// recognizes, a hub without the Placement CRD one meta.IsNoMatchError does.
func Compute(ctx context.Context, c client.Reader, clk clock.PassiveClock, ns, name string) (*Explanation, error) {
	var p clusterv1beta1.Placement
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p); err != nil {
		return nil, fmt.Errorf("reading placement %s/%s: %w", ns, name, err)
	}
	objs, err := ListFleet(ctx, c, ns)
	if err != nil {
		return nil, fmt.Errorf("reading the fleet: %w", err)
	}
	snap := SnapshotFrom(objs, ns, name)
	return &Explanation{Placement: &p, Result: scheduler.New(clk).Schedule(&p, snap), CurrentDecisions: snap.CurrentDecisions}, nil
}

// Notes say what a reader of the explanation must also know: that scheduling is disabled on the
// placement, or that the hub's PlacementDecisions select other clusters than scheduling now does.
func (e *Explanation) Notes() []string {
	if e.Placement.Annotations[clusterv1beta1.PlacementDisableAnnotation] == "true" {
		// The controller leaves such a placement alone, so its decisions are never "stale".
		return []string{fmt.Sprintf("Scheduling is disabled by the annotation %s=true: the hub keeps the PlacementDecisions it has (%s).",
			clusterv1beta1.PlacementDisableAnnotation, list(e.CurrentDecisions))}
	}
	if n := noteStale(e.CurrentDecisions, &e.Result); n != "" {
		return []string{n}
	}
	return nil
}

// noteStale says when the hub's PlacementDecisions select other clusters than scheduling now
// does: the controller has not caught up yet. It says nothing of a misconfigured placement, whose
// decisions the controller keeps.
func noteStale(current []string, res *scheduler.Result) string {
	now := make([]string, 0, len(res.Decisions))
	for _, d := range res.Decisions {
		now = append(now, d.ClusterName)
	}
	slices.Sort(now)
	if res.Misconfigured || slices.Equal(current, now) {
		return ""
	}
	return fmt.Sprintf("The hub's PlacementDecisions select %s; scheduling now selects %s: the placement controller has not caught up yet.",
		list(current), list(now))
}

func list(names []string) string {
	if len(names) == 0 {
		return "no cluster"
	}
	return strings.Join(names, ", ")
}
