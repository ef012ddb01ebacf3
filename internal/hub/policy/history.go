package policy

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/internal/contract/compliancehistory"
)

// ReasonHistoryNotOwned is the Warning event on a root whose history ConfigMap's name is taken
// by a ConfigMap the hub did not make.
const ReasonHistoryNotOwned = "ComplianceHistoryNotOwned"

// histories remembers, per root policy, each cluster's last recorded compliance, so that only
// changes are written (seeded from the ConfigMap on a root's first reconcile after a start).
type histories struct {
	mu   sync.Mutex
	last map[types.NamespacedName]map[string]policyv1.ComplianceState
}

// recordHistory appends to root's compliance history the changes from what it last recorded to
// status (each placed cluster's compliance), at the time each cluster reported (reportTimes) or
// now. The ConfigMap is the hub's (label, owner reference to the root, deleted with it); one of
// that name without the label is left alone, and the root gets a Warning event.
func (r *Reconciler) recordHistory(ctx context.Context, root *policyv1.Policy, status []*policyv1.CompliancePerClusterStatus, reportTimes map[string]time.Time) error {
	key := client.ObjectKeyFromObject(root)
	now := map[string]policyv1.ComplianceState{}
	for _, s := range status {
		now[s.ClusterName] = s.ComplianceState
	}
	r.hist.mu.Lock()
	last, known := r.hist.last[key]
	r.hist.mu.Unlock()
	if known && len(compliancehistory.Changes(last, now, func(string) time.Time { return time.Time{} })) == 0 {
		return nil
	}
	name := compliancehistory.Name(root.Name)
	cm := &corev1.ConfigMap{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: root.Namespace, Name: name}, cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = nil
	case err != nil:
		return fmt.Errorf("reading the compliance history of Policy %s/%s: %w", root.Namespace, root.Name, err)
	case cm.Labels[compliancehistory.Label] != root.Name:
		r.Recorder.Eventf(root, nil, corev1.EventTypeWarning, ReasonHistoryNotOwned, "RecordHistory",
			"ConfigMap %s/%s exists and was not made by the hub (no label %s=%s): the policy's compliance history is not kept; delete or rename that ConfigMap",
			root.Namespace, name, compliancehistory.Label, root.Name)
		return nil
	}
	var entries []compliancehistory.Entry
	if cm != nil {
		entries, _ = compliancehistory.Parse(cm.Data[compliancehistory.Key])
	}
	at := func(c string) time.Time {
		if t, ok := reportTimes[c]; ok && !t.IsZero() {
			return t
		}
		return r.clock().Now().Truncate(time.Second)
	}
	changes := compliancehistory.Changes(compliancehistory.Last(entries), now, at)
	if len(changes) > 0 {
		data := compliancehistory.Format(append(entries, changes...))
		if err := r.writeHistory(ctx, root, cm, name, data); err != nil {
			return err
		}
	}
	r.hist.mu.Lock()
	if r.hist.last == nil {
		r.hist.last = map[types.NamespacedName]map[string]policyv1.ComplianceState{}
	}
	r.hist.last[key] = now
	r.hist.mu.Unlock()
	return nil
}

func (r *Reconciler) writeHistory(ctx context.Context, root *policyv1.Policy, cur *corev1.ConfigMap, name, data string) error {
	if cur == nil {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: root.Namespace, Name: name,
				Labels: map[string]string{compliancehistory.Label: root.Name},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: policyv1.GroupVersion.String(), Kind: policyv1.Kind,
					Name: root.Name, UID: root.UID}}},
			Data: map[string]string{compliancehistory.Key: data},
		}
		if err := r.Client.Create(ctx, cm); err != nil {
			return fmt.Errorf("creating the compliance history of Policy %s/%s: %w", root.Namespace, root.Name, err)
		}
		return nil
	}
	next := cur.DeepCopy()
	if next.Data == nil {
		next.Data = map[string]string{}
	}
	next.Data[compliancehistory.Key] = data
	// With cur's resourceVersion: a write between is not lost, the reconcile tries again.
	if err := r.Client.Update(ctx, next); err != nil {
		return fmt.Errorf("updating the compliance history of Policy %s/%s: %w", root.Namespace, root.Name, err)
	}
	return nil
}

// forgetHistory drops what the hub remembers of a root that is gone (its ConfigMap goes with it).
func (r *Reconciler) forgetHistory(key types.NamespacedName) {
	r.hist.mu.Lock()
	delete(r.hist.last, key)
	r.hist.mu.Unlock()
}
