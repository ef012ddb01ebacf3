package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// JobComplete says whether j has the condition Complete.
func JobComplete(j *batchv1.Job) bool {
	for _, cond := range j.Status.Conditions {
		if cond.Type == batchv1.JobComplete && cond.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// WaitJob waits up to timeout until cond accepts job j as c reads it; what says what for.
func WaitJob(t testing.TB, c client.Client, j *batchv1.Job, what string, timeout time.Duration, cond func(*batchv1.Job) bool) {
	t.Helper()
	WaitFor(t, timeout, "job "+j.Name+" "+what, func(ctx context.Context) (bool, string, error) {
		got := &batchv1.Job{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(j), got); err != nil {
			return false, "", err
		}
		return cond(got), fmt.Sprintf("suspend %v, active %d, succeeded %d, conditions %+v",
			ptr.Deref(got.Spec.Suspend, false), got.Status.Active, got.Status.Succeeded, got.Status.Conditions), nil
	})
}

// JobWorkload returns the Workload Kueue made for job j (owned by it), or nil when there is none
// yet.
func JobWorkload(ctx context.Context, c client.Client, j *batchv1.Job) (*kueuev1beta2.Workload, error) {
	got := &batchv1.Job{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(j), got); err != nil {
		return nil, err
	}
	l := &kueuev1beta2.WorkloadList{}
	if err := c.List(ctx, l, client.InNamespace(j.Namespace)); err != nil {
		return nil, err
	}
	for i := range l.Items {
		for _, o := range l.Items[i].OwnerReferences {
			if o.UID == got.UID {
				return &l.Items[i], nil
			}
		}
	}
	return nil, nil
}
