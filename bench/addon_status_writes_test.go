//go:build integration

package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
)

// statusWrites counts the ManagedClusterAddOn status changes one informer sees, each named by
// what it changed (each condition as type=reason, and configReferences): the controllers that
// write an add-on's status each own their conditions, so the names say who wrote and why. Changes
// made while the informer lists again (after the API server ended its watch) count as one.
//
// The same informer tells which add-ons are Available, so the benchmark waits on its cache rather
// than listing every ManagedClusterAddOn again and again: a list of 1,000 every 100 ms cost the
// API server it measures a tenth of its CPU (seen in its profile).
type statusWrites struct {
	mu        sync.Mutex
	counts    map[string]int
	available map[string]bool
}

// note records an add-on's availability as the informer sees it now.
func (s *statusWrites) note(m *addonv1alpha1.ManagedClusterAddOn) {
	s.available[m.Namespace+"/"+m.Name] = meta.IsStatusConditionTrue(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable)
}

// availability is how many add-ons the informer has seen, and how many of them are Available.
func (s *statusWrites) availability() (seen, available int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ok := range s.available {
		if ok {
			available++
		}
	}
	return len(s.available), available
}

func watchStatusWrites(ctx context.Context, b *testing.B, cfg *rest.Config) *statusWrites {
	s := &statusWrites{counts: map[string]int{}, available: map[string]bool{}}
	inform(ctx, b, cfg, &addonv1alpha1.ManagedClusterAddOn{}, toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			s.mu.Lock()
			s.note(o.(*addonv1alpha1.ManagedClusterAddOn))
			s.mu.Unlock()
		},
		UpdateFunc: func(old, cur any) {
			m := cur.(*addonv1alpha1.ManagedClusterAddOn)
			s.mu.Lock()
			defer s.mu.Unlock()
			s.note(m)
			if what := statusChange(old.(*addonv1alpha1.ManagedClusterAddOn).Status, m.Status); what != "" {
				s.counts[what]++
			}
		},
	})
	return s
}

// statusChange names what changed between two statuses ("" when nothing did).
func statusChange(old, cur addonv1alpha1.ManagedClusterAddOnStatus) string {
	var parts []string
	for _, c := range cur.Conditions {
		o := meta.FindStatusCondition(old.Conditions, c.Type)
		if o == nil || o.Status != c.Status || o.Reason != c.Reason || o.Message != c.Message {
			parts = append(parts, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
		}
	}
	if !equality.Semantic.DeepEqual(old.ConfigReferences, cur.ConfigReferences) {
		parts = append(parts, "configReferences")
	}
	if !equality.Semantic.DeepEqual(old.Registrations, cur.Registrations) || old.Namespace != cur.Namespace || old.HealthCheck != cur.HealthCheck {
		parts = append(parts, "registrations")
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// print prints the counts, most frequent first.
func (s *statusWrites) print(pr progress, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.counts))
	for k := range s.counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return s.counts[b] - s.counts[a] })
	pr.printf("ManagedClusterAddOn status changes seen, per cluster (what each changed):")
	for _, k := range keys {
		pr.printf("  %5.2f  %s", float64(s.counts[k])/float64(n), k)
	}
}
