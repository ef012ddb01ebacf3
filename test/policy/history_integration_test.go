//go:build integration

package policy

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/internal/contract/compliancehistory"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestComplianceHistory: every change of a cluster's compliance is kept in the policy's history
// ConfigMap, with the time the cluster reported it, so an auditor can say when a cluster stopped
// complying and for how long; a ConfigMap of that name the hub did not make is left alone.
func TestComplianceHistory(t *testing.T) {
	s := testenv.StartHubWithSet(t, "plc-hist")
	c := s.Client
	ctx := context.Background()
	s.AgentlessCluster(t, "plc-hist-1", map[string]string{"hist": "yes"})
	s.AgentlessPlacement(t, "hist", map[string]string{"hist": "yes"})
	root := loadPolicy(t, "policy-namespace.yaml", s.Namespace)
	testenv.Create(t, c, root)
	// Someone's own ConfigMap holds the name of a second policy's history.
	other := loadPolicy(t, "policy-limitmemory.yaml", s.Namespace)
	taken := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: compliancehistory.Name(other.Name)}, Data: map[string]string{"mine": "yes"}}
	testenv.Create(t, c, taken)
	testenv.Create(t, c, other)
	bind(t, s, "hist", "hist", subject(policyv1.Kind, root.Name), subject(policyv1.Kind, other.Name))
	waitCopies(t, c, root, nil, "plc-hist-1")
	waitCopies(t, c, other, nil, "plc-hist-1")

	var states []policyv1.ComplianceState
	for _, state := range []policyv1.ComplianceState{policyv1.Compliant, policyv1.NonCompliant, policyv1.Compliant} {
		report(t, c, root, "plc-hist-1", state)
		report(t, c, other, "plc-hist-1", state)
		states = append(states, state)
		testenv.WaitFor(t, wait, fmt.Sprintf("the history to hold %v", states), func(ctx context.Context) (bool, string, error) {
			cm := &corev1.ConfigMap{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: compliancehistory.Name(root.Name)}, cm); err != nil {
				return false, "", client.IgnoreNotFound(err)
			}
			entries, skipped := compliancehistory.Parse(cm.Data[compliancehistory.Key])
			var got []policyv1.ComplianceState
			for _, e := range entries {
				if e.Cluster != "plc-hist-1" || time.Since(e.At) > time.Minute {
					return false, "", fmt.Errorf("entry %v: not the cluster's, or not of its report time", e)
				}
				got = append(got, e.State)
			}
			if cm.Labels[compliancehistory.Label] != root.Name || len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != root.UID {
				return false, "", fmt.Errorf("the history's label or owner: %v %v", cm.Labels, cm.OwnerReferences)
			}
			return fmt.Sprint(got) == fmt.Sprint(states) && skipped == 0, fmt.Sprintf("%v", got), nil
		})
	}

	testenv.WaitFor(t, wait, "the event on the policy whose history name is taken", func(ctx context.Context) (bool, string, error) {
		l := &eventsv1.EventList{}
		if err := c.List(ctx, l, client.InNamespace(s.Namespace)); err != nil {
			return false, "", err
		}
		for _, e := range l.Items {
			if e.Reason == "ComplianceHistoryNotOwned" && e.Regarding.Name == other.Name && strings.Contains(e.Note, "delete or rename that ConfigMap") {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("%d events", len(l.Items)), nil
	})
	if err := c.Get(ctx, client.ObjectKeyFromObject(taken), taken); err != nil || len(taken.Data) != 1 || taken.Data["mine"] != "yes" {
		t.Errorf("the user's ConfigMap was changed: %v %v", err, taken.Data)
	}
}
