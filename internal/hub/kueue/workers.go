package kueue

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	usagev1alpha1 "github.com/flotilla/flotilla/api/usage/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/scheduler/plugins/gpufit"
	"github.com/flotilla/flotilla/internal/core/workloadfit"
)

// The reads below are the dispatcher's, exported so that `flotilla explain workload`
// (internal/hub/fleetview) sees a workload exactly as the dispatcher does.

// MultiKueueChecks are the names of the AdmissionChecks of Kueue's MultiKueue controller.
func MultiKueueChecks(ctx context.Context, c client.Reader) (map[string]bool, error) {
	l := &kueuev1beta2.AdmissionCheckList{}
	if err := c.List(ctx, l); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, ac := range l.Items {
		if ac.Spec.ControllerName == kueuev1beta2.MultiKueueControllerName {
			out[ac.Name] = true
		}
	}
	return out, nil
}

// Worker is one cluster of a MultiKueueConfig.
type Worker struct {
	Name string
	// Active is the MultiKueueCluster's Active condition; Message says why it is not active.
	Active  bool
	Message string
}

// ConfigWorkers are the workers of the MultiKueueConfig of AdmissionCheck check, in the config's
// order (which the placement ranks, best first), and the config's name. Both are empty when the
// check or its config is missing or the check names no MultiKueueConfig (Kueue then reports the
// check inactive).
func ConfigWorkers(ctx context.Context, c client.Reader, check string) (string, []Worker, error) {
	ac := &kueuev1beta2.AdmissionCheck{}
	if err := c.Get(ctx, client.ObjectKey{Name: check}, ac); err != nil {
		return "", nil, client.IgnoreNotFound(err)
	}
	p := ac.Spec.Parameters
	if p == nil || p.Kind != "MultiKueueConfig" || p.APIGroup != kueuev1beta2.GroupVersion.Group {
		return "", nil, nil
	}
	cfg := &kueuev1beta2.MultiKueueConfig{}
	if err := c.Get(ctx, client.ObjectKey{Name: p.Name}, cfg); err != nil {
		return "", nil, client.IgnoreNotFound(err)
	}
	out := make([]Worker, 0, len(cfg.Spec.Clusters))
	for _, name := range cfg.Spec.Clusters {
		mkc := &kueuev1beta2.MultiKueueCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, mkc); err != nil {
			out = append(out, Worker{Name: name, Message: "MultiKueueCluster " + name + ": " + err.Error()})
			continue
		}
		w := Worker{Name: name}
		cond := meta.FindStatusCondition(mkc.Status.Conditions, kueuev1beta2.MultiKueueClusterActive)
		switch {
		case cond == nil:
			w.Message = "no Active condition yet"
		case cond.Status == "True":
			w.Active = true
		default:
			w.Message = cond.Reason + ": " + cond.Message
		}
		out = append(out, w)
	}
	return p.Name, out, nil
}

// JudgeWorkers is the dispatcher's verdict of each worker, in the order given, on the workload's
// gangs (workloadfit.Gangs with the hub's ResourceFlavors' node labels), by JudgeGangs.
func JudgeWorkers(ctx context.Context, c client.Reader, wl *kueuev1beta2.Workload, clusters []string, claims *workloadfit.Claims, now time.Time) []workloadfit.Verdict {
	return JudgeGangs(ctx, c, wl.UID, workloadfit.Gangs(wl, FlavorLabels(ctx, c)), clusters, claims, now)
}

// JudgeGangs is the verdict of each worker, in the order given, on gangs of the workload uid:
// workloadfit.JudgeAfter with each worker's ResourceUsage CLUSTER/resource-usage, less what
// claims holds for it (nil claims hold nothing).
func JudgeGangs(ctx context.Context, c client.Reader, uid types.UID, gangs []gpufit.Gang, clusters []string, claims *workloadfit.Claims, now time.Time) []workloadfit.Verdict {
	out := make([]workloadfit.Verdict, 0, len(clusters))
	for _, cluster := range clusters {
		var u *usagev1alpha1.ResourceUsage
		if len(gangs) > 0 {
			u = &usagev1alpha1.ResourceUsage{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: usagev1alpha1.ResourceUsageName}, u); err != nil {
				u = nil
			}
		}
		out = append(out, workloadfit.JudgeAfter(cluster, u, claims, uid, gangs, now))
	}
	return out
}

// FlavorLabels reads the node labels of the hub's ResourceFlavors.
func FlavorLabels(ctx context.Context, c client.Reader) workloadfit.FlavorLabels {
	return func(name kueuev1beta2.ResourceFlavorReference) map[string]string {
		rf := &kueuev1beta2.ResourceFlavor{}
		if err := c.Get(ctx, client.ObjectKey{Name: string(name)}, rf); err != nil {
			return nil
		}
		return rf.Spec.NodeLabels
	}
}
