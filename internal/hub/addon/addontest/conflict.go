package addontest

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
)

// ConflictOnce is a fake client's interceptor whose first status update applies meanwhile to the
// stored ManagedClusterAddOn (its object and its status, as another writer would) before the
// update itself, which then conflicts: the stored resourceVersion has moved on. Later updates
// pass through.
func ConflictOnce(meanwhile func(*addonv1alpha1.ManagedClusterAddOn)) interceptor.Funcs {
	first := true
	return interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, o client.Object, opts ...client.SubResourceUpdateOption) error {
		if first {
			first = false
			stored := &addonv1alpha1.ManagedClusterAddOn{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(o), stored); err != nil {
				return err
			}
			meanwhile(stored)
			if err := c.Update(ctx, stored); err != nil {
				return err
			}
			meanwhile(stored) // Update answered with the stored status
			if err := c.Status().Update(ctx, stored); err != nil {
				return err
			}
		}
		return c.SubResource(sub).Update(ctx, o, opts...)
	}}
}
