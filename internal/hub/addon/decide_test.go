package addon

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1alpha1 "github.com/flotilla/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/rollout"
)

// decided is a decision reduced to what a reader checks: per placement, its add-ons' clusters,
// conflicts and those the rollout reaches now; the add-ons no placement serves.
type decided struct {
	Placements []decidedPlacement
	Unserved   []string
	// InRollout are the clusters whose add-on gets the desired configurations now.
	InRollout []string
	// SameAsPlacement are the clusters whose add-on runs its placement's own configurations.
	SameAsPlacement []string
	RolloutErr      []string
}

type decidedPlacement struct {
	Name      string
	Addons    []string
	Conflicts []string
	// ToRollout are the placement's clusters its rollout strategy reaches now.
	ToRollout []string
}

func summarize(d decision) decided {
	var out decided
	for _, in := range d.Inputs {
		p := decidedPlacement{Name: in.View.Name, Conflicts: in.Conflicts}
		for _, c := range in.Result.ToRollout {
			p.ToRollout = append(p.ToRollout, c.Name)
		}
		slices.Sort(p.ToRollout) // the order is rollout's

		for _, a := range in.Addons {
			p.Addons = append(p.Addons, a.MCA.Namespace)
		}
		if in.RolloutErr != "" {
			out.RolloutErr = append(out.RolloutErr, in.View.Name+": "+in.RolloutErr)
		}
		out.Placements = append(out.Placements, p)
	}
	for _, a := range d.Addons {
		if a.Placement == noPlacement {
			out.Unserved = append(out.Unserved, a.MCA.Namespace)
		}
		if a.InRollout {
			out.InRollout = append(out.InRollout, a.MCA.Namespace)
		}
		if a.SameAsPlacement {
			out.SameAsPlacement = append(out.SameAsPlacement, a.MCA.Namespace)
		}
	}
	return out
}

func clusters(names ...string) []rollout.Cluster {
	var out []rollout.Cluster
	for _, n := range names {
		out = append(out, rollout.Cluster{Name: n})
	}
	return out
}

func TestDecide(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	views := func() []placementView {
		return []placementView{
			{PlacementRef: addonv1alpha1.PlacementRef{Namespace: "ns", Name: "p0"}, Clusters: clusters("c1", "c2")},
			{PlacementRef: addonv1alpha1.PlacementRef{Namespace: "ns", Name: "p1"}, Clusters: clusters("c3")},
		}
	}
	for name, tc := range map[string]struct {
		cma   func() *addonv1alpha1.ClusterManagementAddOn
		views func() []placementView
		mcas  func(cma *addonv1alpha1.ClusterManagementAddOn) []*addonv1alpha1.ManagedClusterAddOn
		want  decided
		// wantRecheck is when the decision asks to look again.
		wantRecheck time.Duration
	}{
		"each add-on under the placement serving its cluster; a user's under none; another's is a conflict": {
			cma:   cmaWith,
			views: views,
			mcas: func(cma *addonv1alpha1.ClusterManagementAddOn) []*addonv1alpha1.ManagedClusterAddOn {
				return []*addonv1alpha1.ManagedClusterAddOn{mcaIn(cma, "c1", true), mcaIn(cma, "c2", false), mcaIn(cma, "c3", true), mcaIn(cma, "c9", false)}
			},
			want: decided{
				Placements: []decidedPlacement{
					{Name: "p0", Addons: []string{"c1", "c2"}, Conflicts: []string{"c2/gpu"}, ToRollout: []string{"c1", "c2"}},
					{Name: "p1", Addons: []string{"c3"}, ToRollout: []string{"c3"}},
				},
				Unserved:        []string{"c9"},
				InRollout:       []string{"c9", "c1", "c2", "c3"},
				SameAsPlacement: []string{"c9", "c1", "c2", "c3"},
			},
		},
		"an add-on whose spec names its own configuration is not its placement's": {
			cma:   cmaWith,
			views: views,
			mcas: func(cma *addonv1alpha1.ClusterManagementAddOn) []*addonv1alpha1.ManagedClusterAddOn {
				own := mcaIn(cma, "c1", true)
				own.Spec.Configs = []addonv1alpha1.AddOnConfig{cfg(adc, "c1", "mine")}
				return []*addonv1alpha1.ManagedClusterAddOn{own, mcaIn(cma, "c2", true)}
			},
			want: decided{
				Placements:      []decidedPlacement{{Name: "p0", Addons: []string{"c1", "c2"}, ToRollout: []string{"c1", "c2"}}, {Name: "p1", ToRollout: []string{"c3"}}},
				InRollout:       []string{"c1", "c2"},
				SameAsPlacement: []string{"c2"},
			},
		},
		"a placement whose decisions were not read rolls nothing out": {
			cma: cmaWith,
			views: func() []placementView {
				v := views()
				v[0].Err = "the decisions could not be listed"
				return v
			},
			mcas: func(cma *addonv1alpha1.ClusterManagementAddOn) []*addonv1alpha1.ManagedClusterAddOn {
				return []*addonv1alpha1.ManagedClusterAddOn{mcaIn(cma, "c1", true), mcaIn(cma, "c3", true)}
			},
			want: decided{
				Placements:      []decidedPlacement{{Name: "p0", Addons: []string{"c1"}}, {Name: "p1", Addons: []string{"c3"}, ToRollout: []string{"c3"}}},
				InRollout:       []string{"c3"},
				SameAsPlacement: []string{"c1", "c3"},
			},
		},
		"an add-on being deleted is left out": {
			cma:   cmaWith,
			views: views,
			mcas: func(cma *addonv1alpha1.ClusterManagementAddOn) []*addonv1alpha1.ManagedClusterAddOn {
				gone := mcaIn(cma, "c1", true)
				gone.DeletionTimestamp = &metav1.Time{Time: now}
				return []*addonv1alpha1.ManagedClusterAddOn{gone, mcaIn(cma, "c2", true)}
			},
			want: decided{
				Placements:      []decidedPlacement{{Name: "p0", Addons: []string{"c2"}, ToRollout: []string{"c1", "c2"}}, {Name: "p1", ToRollout: []string{"c3"}}},
				InRollout:       []string{"c2"},
				SameAsPlacement: []string{"c2"},
			},
		},
		"a progressive rollout of one at a time reaches one add-on": {
			cma: func() *addonv1alpha1.ClusterManagementAddOn {
				cma := cmaWith()
				cma.Spec.InstallStrategy.Placements[0].RolloutStrategy = clusterv1alpha1.RolloutStrategy{
					Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)}}
				return cma
			},
			views: views,
			mcas: func(cma *addonv1alpha1.ClusterManagementAddOn) []*addonv1alpha1.ManagedClusterAddOn {
				return []*addonv1alpha1.ManagedClusterAddOn{mcaIn(cma, "c1", true), mcaIn(cma, "c2", true)}
			},
			want: decided{
				Placements:      []decidedPlacement{{Name: "p0", Addons: []string{"c1", "c2"}, ToRollout: []string{"c1"}}, {Name: "p1", ToRollout: []string{"c3"}}},
				InRollout:       []string{"c1"},
				SameAsPlacement: []string{"c1", "c2"},
			},
		},
		"a bad rollout strategy is the placement's error, and reaches no add-on": {
			cma: func() *addonv1alpha1.ClusterManagementAddOn {
				cma := cmaWith()
				cma.Spec.InstallStrategy.Placements[0].RolloutStrategy = clusterv1alpha1.RolloutStrategy{
					Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromString("many")}}
				return cma
			},
			views: views,
			mcas: func(cma *addonv1alpha1.ClusterManagementAddOn) []*addonv1alpha1.ManagedClusterAddOn {
				return []*addonv1alpha1.ManagedClusterAddOn{mcaIn(cma, "c1", true)}
			},
			want: decided{
				Placements:      []decidedPlacement{{Name: "p0", Addons: []string{"c1"}}, {Name: "p1", ToRollout: []string{"c3"}}},
				SameAsPlacement: []string{"c1"},
				RolloutErr:      []string{"p0: ROLLOUT-ERROR"},
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			cma := tc.cma()
			v := tc.views()
			d := decide(clocktesting.NewFakePassiveClock(now), cma, v, servedClusters(v), tc.mcas(cma), hashes{})
			got := summarize(d)
			for i, e := range got.RolloutErr {
				if e != "" {
					got.RolloutErr[i] = e[:4] + "ROLLOUT-ERROR" // the message is rollout's; that there is one is decide's
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decide (-want +got):\n%s", diff)
			}
			if d.RecheckAfter != tc.wantRecheck {
				t.Errorf("RecheckAfter %v, want %v", d.RecheckAfter, tc.wantRecheck)
			}
		})
	}
}

func TestServedClusters(t *testing.T) {
	s := servedClusters([]placementView{{Clusters: clusters("a", "b")}, {Clusters: clusters("c")}})
	got := map[string]int{"a": s.placementOf("a"), "c": s.placementOf("c"), "z": s.placementOf("z")}
	if diff := cmp.Diff(map[string]int{"a": 0, "c": 1, "z": noPlacement}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]bool{"a": true, "b": true, "c": true}, s.required()); diff != "" {
		t.Errorf("required (-want +got):\n%s", diff)
	}
}
