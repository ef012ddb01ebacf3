package addon

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/rollout"
)

func TestDesiredAddonStatus(t *testing.T) {
	desired := []addonv1alpha1.ConfigReference{reference("a", "h2", "")}
	type want struct {
		Configured string
		Refs       []addonv1alpha1.ConfigReference
	}
	cases := map[string]struct {
		view addonView
		want want
	}{
		"reached by the rollout: configured": {
			view: addonView{Desired: desired, InRollout: true, State: rollout.ClusterStatus{Status: rollout.ToApply}},
			want: want{Configured: "True/ConfigurationsConfigured: Configurations configured", Refs: desired},
		},
		"waiting for the rollout": {
			view: addonView{Desired: desired, State: rollout.ClusterStatus{Status: rollout.ToApply}},
			want: want{Configured: "False/ConfigurationsNotConfigured: Configurations updated and not configured yet"},
		},
		"a config that does not resolve": {
			view: addonView{Problems: []string{"ManagedClusterAddOn c1/gpu spec.configs[0] names x, which does not exist"}, InRollout: true},
			want: want{Configured: "False/ConfigurationNotFound: ManagedClusterAddOn c1/gpu spec.configs[0] names x, which does not exist"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := tc.view
			v.MCA = &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "gpu", Generation: 3}}
			st := desiredAddonStatus(cmaWith(), &v, metav1.NewTime(t0))
			c := meta.FindStatusCondition(st.Conditions, addonv1alpha1.ManagedClusterAddOnConditionConfigured)
			got := want{Configured: string(c.Status) + "/" + c.Reason + ": " + c.Message, Refs: st.ConfigReferences}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]addonv1alpha1.ConfigGroupResource{tpl, adc, cm}, st.SupportedConfigs); diff != "" {
				t.Errorf("supportedConfigs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDesiredProgression(t *testing.T) {
	desired := []addonv1alpha1.ConfigReference{reference("a", "h2", "")}
	done := &addonView{MCA: mcaIn(cmaWith(), "c1", true), SameAsPlacement: true, State: rollout.ClusterStatus{Name: "c1", Status: rollout.Succeeded}}
	waiting := &addonView{MCA: mcaIn(cmaWith(), "c2", true), SameAsPlacement: true, State: rollout.ClusterStatus{Name: "c2", Status: rollout.ToApply}}
	clusters := []rollout.Cluster{{Name: "c1"}, {Name: "c2"}}
	ref := addonv1alpha1.PlacementRef{Namespace: "ns", Name: "p0"}
	type want struct {
		Condition   string
		LastApplied bool
	}
	cases := map[string]struct {
		in   progressionInput
		want want
	}{
		"missing placement": {
			in: progressionInput{View: placementView{PlacementRef: ref, Missing: true}, Desired: desired},
			want: want{Condition: "False/PlacementNotFound: Placement ns/p0 (spec.installStrategy.placements[0]) does not exist: " +
				"create it or name an existing Placement; the add-on is installed on none of its clusters"},
		},
		"half way, with a user's add-on in the way": {
			in: progressionInput{View: placementView{PlacementRef: ref, Clusters: clusters}, Desired: desired,
				Addons: []*addonView{done, waiting}, Conflicts: []string{"c3/gpu"}},
			want: want{Condition: "True/Installing: 1/2 installing... (ManagedClusterAddOns not created by this ClusterManagementAddOn, " +
				"left alone (delete them to have the hub manage these clusters): c3/gpu)"},
		},
		"done": {
			in:   progressionInput{View: placementView{PlacementRef: ref, Clusters: clusters[:1]}, Desired: desired, Addons: []*addonView{done}},
			want: want{Condition: "False/InstallSucceed: 1/1 install completed with no errors.", LastApplied: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := desiredProgression(cmaWith(), nil, tc.in, metav1.NewTime(t0))
			c := meta.FindStatusCondition(p.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing)
			got := want{Condition: string(c.Status) + "/" + c.Reason + ": " + c.Message,
				LastApplied: len(p.ConfigReferences) == 1 && p.ConfigReferences[0].LastAppliedConfig != nil}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("progression (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProgressionKeepsItsName: once an install has applied the desired configurations, the next
// reconcile still calls it an install; a new configuration afterwards is an upgrade, and stays one
// once applied.
func TestProgressionKeepsItsName(t *testing.T) {
	done := &addonView{MCA: mcaIn(cmaWith(), "c1", true), SameAsPlacement: true, State: rollout.ClusterStatus{Name: "c1", Status: rollout.Succeeded}}
	ref := addonv1alpha1.PlacementRef{Namespace: "ns", Name: "p0"}
	in := func(hash string) progressionInput {
		return progressionInput{View: placementView{PlacementRef: ref, Clusters: []rollout.Cluster{{Name: "c1"}}},
			Desired: []addonv1alpha1.ConfigReference{reference("a", hash, "")}, Addons: []*addonView{done}}
	}
	reason := func(p addonv1alpha1.InstallProgression) string {
		return meta.FindStatusCondition(p.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing).Reason
	}
	var got []string
	p := desiredProgression(cmaWith(), nil, in("h1"), metav1.NewTime(t0))
	got = append(got, reason(p))
	p = desiredProgression(cmaWith(), &p, in("h1"), metav1.NewTime(t0))
	got = append(got, reason(p))
	p = desiredProgression(cmaWith(), &p, in("h2"), metav1.NewTime(t0))
	got = append(got, reason(p))
	p = desiredProgression(cmaWith(), &p, in("h2"), metav1.NewTime(t0))
	got = append(got, reason(p))
	want := []string{"InstallSucceed", "InstallSucceed", "UpgradeSucceed", "UpgradeSucceed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reasons over four reconciles (-want +got):\n%s", diff)
	}
}
