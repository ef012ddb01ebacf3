package placement

import (
	"context"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/internal/core/scheduler"
)

// ocmLabels are the labels the scheduler sets on a PlacementDecision; others are left alone.
var ocmLabels = []string{clusterv1beta1.PlacementLabel, clusterv1beta1.DecisionGroupNameLabel, clusterv1beta1.DecisionGroupIndexLabel}

// asSlice is what a PlacementDecision holds, in the scheduler's terms: its name, its OCM labels and
// its decisions.
func asSlice(d *clusterv1beta1.PlacementDecision) scheduler.PlacementDecisionSlice {
	s := scheduler.PlacementDecisionSlice{Name: d.Name, Labels: map[string]string{}, Decisions: d.Status.Decisions}
	for _, k := range ocmLabels {
		if v, ok := d.Labels[k]; ok {
			s.Labels[k] = v
		}
	}
	return s
}

func asSlices(ds []clusterv1beta1.PlacementDecision) []scheduler.PlacementDecisionSlice {
	out := make([]scheduler.PlacementDecisionSlice, len(ds))
	for i := range ds {
		out[i] = asSlice(&ds[i])
	}
	return out
}

// upToDate reports whether the placement's decisions are exactly the desired slices.
func upToDate(current []clusterv1beta1.PlacementDecision, desired []scheduler.PlacementDecisionSlice) bool {
	return len(current) == len(desired) && !slices.ContainsFunc(desired, func(s scheduler.PlacementDecisionSlice) bool {
		i := slices.IndexFunc(current, func(d clusterv1beta1.PlacementDecision) bool { return d.Name == s.Name })
		return i < 0 || !Same(asSlice(&current[i]), s)
	})
}

// syncDecisions makes p's PlacementDecisions hold desired, in the order Plan gives, and says how
// the selected clusters changed ("" when they did not). cached are p's decisions in the cache; when
// they differ from desired, the decisions are read again from the API server, so that the plan
// starts from what consumers see and not from a cache that may lag our last writes.
func (r *Reconciler) syncDecisions(ctx context.Context, p *clusterv1beta1.Placement, cached []clusterv1beta1.PlacementDecision,
	desired []scheduler.PlacementDecisionSlice) (string, error) {
	if upToDate(cached, desired) {
		return "", nil
	}
	// A placement the cache shows without decisions (a new one) is planned from the cache: the
	// plan only creates, and a create that finds the object made meanwhile fails, so nothing
	// can vanish. That saves a request per new placement.
	mine := []clusterv1beta1.PlacementDecision{}
	if len(cached) > 0 {
		live := &clusterv1beta1.PlacementDecisionList{}
		if err := r.APIReader.List(ctx, live, client.InNamespace(p.Namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: p.Name}); err != nil {
			return "", err
		}
		mine = owned(p, live.Items)
	}
	objs := map[string]*clusterv1beta1.PlacementDecision{}
	for i := range mine {
		objs[mine[i].Name] = &mine[i]
	}
	current := asSlices(mine)
	for _, st := range Plan(current, desired) {
		var err error
		if st.Delete {
			d := objs[st.Slice.Name]
			err = r.sent(d, ownWrite{deleted: true}, func() error {
				return client.IgnoreNotFound(r.Client.Delete(ctx, d, client.Preconditions{UID: &d.UID}))
			})
		} else {
			err = r.write(ctx, p, objs, st.Slice)
		}
		if err != nil {
			return "", err
		}
	}
	return membershipChange(current, desired), nil
}

// write makes the PlacementDecision named s.Name hold s: created (owned by p) if missing, its OCM
// labels and its status updated where they differ. Updates carry the resourceVersion read, so a
// write based on an outdated object fails and the placement is scheduled again.
func (r *Reconciler) write(ctx context.Context, p *clusterv1beta1.Placement, objs map[string]*clusterv1beta1.PlacementDecision,
	s scheduler.PlacementDecisionSlice) error {
	d, ok := objs[s.Name]
	if !ok {
		d = &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: p.Namespace, Labels: s.Labels}}
		if err := controllerutil.SetControllerReference(p, d, r.Client.Scheme()); err != nil {
			return err
		}
		if err := r.sent(d, r.content(d, s.Labels, nil), func() error { return r.Client.Create(ctx, d) }); err != nil {
			if apierrors.IsAlreadyExists(err) && !r.controls(ctx, p, d) {
				return fmt.Errorf("PlacementDecision %s/%s exists and is not controlled by Placement %s: delete it so the scheduler can write it: %w",
					p.Namespace, s.Name, p.Name, err)
			}
			return err
		}
		objs[s.Name] = d
	} else if cur := asSlice(d); !maps.Equal(cur.Labels, s.Labels) {
		if d.Labels == nil {
			d.Labels = map[string]string{}
		}
		for _, k := range ocmLabels {
			delete(d.Labels, k)
		}
		for k, v := range s.Labels {
			d.Labels[k] = v
		}
		if err := r.sent(d, r.content(d, s.Labels, d.Status.Decisions), func() error { return r.Client.Update(ctx, d) }); err != nil {
			return err
		}
	}
	if d.Status.Decisions != nil && slices.Equal(d.Status.Decisions, s.Decisions) {
		return nil
	}
	d.Status.Decisions = s.Decisions
	if d.Status.Decisions == nil {
		d.Status.Decisions = []clusterv1beta1.ClusterDecision{} // the API wants a list, not null
	}
	return r.sent(d, r.content(d, s.Labels, d.Status.Decisions), func() error { return r.Client.Status().Update(ctx, d) })
}

// content is what d holds after a write of these labels and decisions, as its events show it.
func (r *Reconciler) content(d *clusterv1beta1.PlacementDecision, labels map[string]string, decisions []clusterv1beta1.ClusterDecision) ownWrite {
	return ownWrite{content: scheduler.PlacementDecisionSlice{Name: d.Name, Labels: labels, Decisions: decisions}}
}

// sent records w as the controller's own write to d, sends it, and forgets it if it failed.
func (r *Reconciler) sent(d *clusterv1beta1.PlacementDecision, w ownWrite, send func() error) error {
	key := client.ObjectKeyFromObject(d)
	r.own.expect(key, w)
	err := send()
	if err != nil {
		r.own.forget(key, w)
	}
	return err
}

// controls reports whether p controls the PlacementDecision named like d, as the API server has
// it; when it does, a create that found it was planned from a cache that lagged, and the
// placement is simply scheduled again.
func (r *Reconciler) controls(ctx context.Context, p *clusterv1beta1.Placement, d *clusterv1beta1.PlacementDecision) bool {
	got := &clusterv1beta1.PlacementDecision{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(d), got); err != nil {
		return true // unknown: retry rather than blame the object
	}
	ref := metav1.GetControllerOf(got)
	return ref != nil && ref.UID == p.UID
}
