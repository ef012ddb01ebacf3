package lease

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
)

func taint(key string, effect clusterv1.TaintEffect, added *time.Time) clusterv1.Taint {
	t := clusterv1.Taint{Key: key, Effect: effect}
	if added != nil {
		at := metav1.NewTime(*added)
		t.TimeAdded = &at
	}
	return t
}

func TestDesiredTaints(t *testing.T) {
	const (
		unreachable = clusterv1.ManagedClusterTaintUnreachable
		unavailable = clusterv1.ManagedClusterTaintUnavailable
		noSelect    = clusterv1.TaintEffectNoSelect
	)
	// now with a fraction of a second, which the API server would not store.
	clockNow := now.Add(400 * time.Millisecond)
	earlier := now.Add(-time.Hour)
	user := clusterv1.Taint{Key: "gpu.flotilla.io/maintenance", Value: "driver-upgrade", Effect: clusterv1.TaintEffectPreferNoSelect, TimeAdded: &metav1.Time{Time: earlier}}
	cases := map[string]struct {
		cluster    *clusterv1.ManagedCluster
		wantTaints []clusterv1.Taint
	}{
		"no Available condition: unreachable added at now, to the second": {
			cluster:    makeCluster("a").Obj(),
			wantTaints: []clusterv1.Taint{taint(unreachable, noSelect, &now)},
		},
		"Unknown: existing unreachable keeps its timeAdded": {
			cluster:    makeCluster("a").Condition(unknown("", earlier)).Taints(taint(unreachable, noSelect, &earlier)).Obj(),
			wantTaints: []clusterv1.Taint{taint(unreachable, noSelect, &earlier)},
		},
		"Unknown after False: unavailable swapped for unreachable, user taint kept in place": {
			cluster: makeCluster("a").Condition(unknown("", earlier)).
				Taints(taint(unavailable, noSelect, &earlier), user).Obj(),
			wantTaints: []clusterv1.Taint{user, taint(unreachable, noSelect, &now)},
		},
		"False: unavailable added, unreachable removed, user taint kept": {
			cluster: makeCluster("a").Condition(available(metav1.ConditionFalse, earlier)).
				Taints(user, taint(unreachable, noSelect, &earlier)).Obj(),
			wantTaints: []clusterv1.Taint{user, taint(unavailable, noSelect, &now)},
		},
		"False: existing unavailable keeps its timeAdded": {
			cluster:    makeCluster("a").Condition(available(metav1.ConditionFalse, earlier)).Taints(taint(unavailable, noSelect, &earlier)).Obj(),
			wantTaints: []clusterv1.Taint{taint(unavailable, noSelect, &earlier)},
		},
		"True: both removed, user taint kept": {
			cluster: makeCluster("a").Condition(available(metav1.ConditionTrue, earlier)).
				Taints(taint(unreachable, noSelect, &earlier), user, taint(unavailable, noSelect, &earlier)).Obj(),
			wantTaints: []clusterv1.Taint{user},
		},
		"True without taints: none": {
			cluster: makeCluster("a").Condition(available(metav1.ConditionTrue, earlier)).Obj(),
		},
		"a hub taint with another effect is replaced by a NoSelect one": {
			cluster:    makeCluster("a").Taints(taint(unreachable, clusterv1.TaintEffectPreferNoSelect, &earlier)).Obj(),
			wantTaints: []clusterv1.Taint{taint(unreachable, noSelect, &now)},
		},
		"duplicates of a hub taint collapse to the first": {
			cluster:    makeCluster("a").Taints(taint(unreachable, noSelect, &earlier), user, taint(unreachable, noSelect, &now)).Obj(),
			wantTaints: []clusterv1.Taint{taint(unreachable, noSelect, &earlier), user},
		},
		"a hub taint without timeAdded gets now": {
			cluster:    makeCluster("a").Taints(taint(unreachable, noSelect, nil)).Obj(),
			wantTaints: []clusterv1.Taint{taint(unreachable, noSelect, &now)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := tc.cluster.DeepCopy()
			got := desiredTaints(tc.cluster.Spec.Taints, tc.cluster.Status.Conditions, clockNow)
			if diff := cmp.Diff(tc.wantTaints, got); diff != "" {
				t.Errorf("taints (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.cluster); diff != "" {
				t.Errorf("desiredTaints changed its input (-before +after):\n%s", diff)
			}
		})
	}
}
