package addon

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/agent/registration"
)

// view is the cluster's ManagedClusterAddOns as a watch with hub credentials sees them.
type view struct {
	hub    *registration.HubClients
	reader client.Reader
}

// addOns lists the cluster's ManagedClusterAddOns from the watch.
func (a *Agent) addOns(ctx context.Context, v *view) ([]addonv1alpha1.ManagedClusterAddOn, error) {
	list := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := v.reader.List(ctx, list, client.InNamespace(a.opts.ClusterName)); err != nil {
		return nil, fmt.Errorf("listing the ManagedClusterAddOns of namespace %s on the hub: %w", a.opts.ClusterName, err)
	}
	return list.Items, nil
}

// idle is how long a loop waits when only a signal can give it work.
const idle = time.Hour

// watchLoop keeps a watch of the cluster's ManagedClusterAddOns open with the current hub
// credentials, and opens a new one when they change.
type watchLoop struct {
	a       *Agent
	running *registration.HubClients
	stop    context.CancelFunc
}

func (w *watchLoop) step(ctx context.Context) (time.Duration, error) {
	a := w.a
	cur := a.opts.Hub.Current()
	if cur == w.running && (cur == nil || a.view.Get() != nil) {
		return idle, nil
	}
	if w.stop != nil {
		w.stop()
		w.stop, w.running = nil, nil
		a.view.Set(nil)
	}
	if cur == nil {
		return idle, nil
	}
	cfg := rest.CopyConfig(cur.Config)
	cfg.QPS, cfg.Burst = a.opts.QPS, a.opts.Burst
	c, err := cache.New(cfg, cache.Options{
		Scheme:            scheme.Scheme,
		DefaultNamespaces: map[string]cache.Config{a.opts.ClusterName: {}},
	})
	if err != nil {
		return 0, err
	}
	wctx, cancel := context.WithCancel(ctx)
	inf, err := c.GetInformer(wctx, &addonv1alpha1.ManagedClusterAddOn{})
	if err != nil {
		cancel()
		return 0, err
	}
	changed := func(any) { a.changed.Set(struct{}{}) }
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: changed, DeleteFunc: changed, UpdateFunc: func(_, o any) { changed(o) },
	}); err != nil {
		cancel()
		return 0, err
	}
	go func() { _ = c.Start(wctx) }()
	sctx, scancel := context.WithTimeout(wctx, requestTimeout)
	defer scancel()
	if !c.WaitForCacheSync(sctx) {
		cancel()
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, fmt.Errorf("watching the ManagedClusterAddOns of namespace %s on the hub %s: not synced within %s", a.opts.ClusterName, cur.Config.Host, requestTimeout)
	}
	w.running, w.stop = cur, cancel
	a.view.Set(&view{hub: cur, reader: c})
	return idle, nil
}
