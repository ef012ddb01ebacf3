package resourceusage

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/agent/builtin"
)

// publisher writes the cluster's ResourceUsage on the hub, only when the figures changed or a
// third of their validity has passed. It remembers the object it last wrote, so that a write
// costs one request.
type publisher struct {
	env      builtin.Env
	interval time.Duration
	last     *usagev1alpha1.ResourceUsage
}

func (p *publisher) key() client.ObjectKey {
	return client.ObjectKey{Namespace: p.env.ClusterName, Name: usagev1alpha1.ResourceUsageName}
}

// publish writes the figures compute returns, if they are due.
func (p *publisher) publish(ctx context.Context, compute func() (int32, []usagev1alpha1.ResourceFigures)) error {
	nodes, resources := compute()
	now := p.env.Clock.Now()
	if p.last != nil && !p.due(now, nodes, resources) {
		return nil
	}
	err := p.write(ctx, now, nodes, resources)
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		// Someone else changed or deleted it: read it again and write once more.
		p.last = nil
		err = p.write(ctx, now, nodes, resources)
	}
	return err
}

// due reports whether the figures differ from the last written or the written ones are a third
// of the way to expiring.
func (p *publisher) due(now time.Time, nodes int32, resources []usagev1alpha1.ResourceFigures) bool {
	s := p.last.Status
	fresh := s.ValidUntil != nil && s.ValidUntil.Sub(now) > 2*p.interval
	return !fresh || s.Nodes != nodes || !equality.Semantic.DeepEqual(s.Resources, resources)
}

func (p *publisher) write(ctx context.Context, now time.Time, nodes int32, resources []usagev1alpha1.ResourceFigures) error {
	key := p.key()
	if p.last == nil {
		u, err := p.read(ctx)
		if err != nil {
			return err
		}
		p.last = u
	}
	u := p.last.DeepCopy()
	u.Status = usagev1alpha1.ResourceUsageStatus{
		ObservedTime: &metav1.Time{Time: now.Truncate(time.Second)},
		ValidUntil:   &metav1.Time{Time: now.Add(3 * p.interval).Truncate(time.Second)},
		Nodes:        nodes,
		Resources:    resources,
	}
	if err := p.env.Hub.Status().Update(ctx, u); err != nil {
		return fmt.Errorf("writing the figures of ResourceUsage %s: %w", key, err)
	}
	p.last = u
	return nil
}

// read returns the cluster's ResourceUsage, creating it when there is none. It refuses one the
// add-on did not create.
func (p *publisher) read(ctx context.Context) (*usagev1alpha1.ResourceUsage, error) {
	u := &usagev1alpha1.ResourceUsage{}
	if err := builtin.GetOrCreateOwn(ctx, p.env.Hub, p.key(), u, Name, "delete it, or disable the add-on on this cluster"); err != nil {
		return nil, err
	}
	return u, nil
}
