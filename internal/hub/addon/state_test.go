package addon

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/internal/core/rollout"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func specHash(name, hash string) *addonv1alpha1.ConfigSpecHash {
	return &addonv1alpha1.ConfigSpecHash{ConfigReferent: ref("ns", name), SpecHash: hash}
}

func reference(name, desired, applied string) addonv1alpha1.ConfigReference {
	r := addonv1alpha1.ConfigReference{ConfigGroupResource: adc, ConfigReferent: ref("ns", name), DesiredConfig: specHash(name, desired)}
	if applied != "" {
		r.LastAppliedConfig = specHash(name, applied)
	}
	return r
}

func progressingCond(reason string) []metav1.Condition {
	return []metav1.Condition{{Type: addonv1alpha1.ManagedClusterAddOnConditionProgressing, Status: metav1.ConditionTrue, Reason: reason,
		LastTransitionTime: metav1.NewTime(t0)}}
}

func TestRolloutState(t *testing.T) {
	desired := []addonv1alpha1.ConfigReference{reference("a", "h2", "")}
	cases := map[string]struct {
		refs    []addonv1alpha1.ConfigReference
		conds   []metav1.Condition
		desired []addonv1alpha1.ConfigReference
		want    rollout.ClusterStatus
	}{
		"no configuration yet": {
			desired: desired,
			want:    rollout.ClusterStatus{Name: "c1", Status: rollout.ToApply},
		},
		"an older version desired": {
			refs:    []addonv1alpha1.ConfigReference{reference("a", "h1", "h1")},
			desired: desired,
			want:    rollout.ClusterStatus{Name: "c1", Status: rollout.ToApply},
		},
		"another object desired": {
			refs:    []addonv1alpha1.ConfigReference{reference("b", "h2", "")},
			desired: desired,
			want:    rollout.ClusterStatus{Name: "c1", Status: rollout.ToApply},
		},
		"desired, being applied": {
			refs:    []addonv1alpha1.ConfigReference{reference("a", "h2", "h1")},
			conds:   progressingCond(ReasonProgressing),
			desired: desired,
			want:    rollout.ClusterStatus{Name: "c1", Status: rollout.Progressing, Since: t0},
		},
		"desired, no Progressing reason yet": {
			refs:    []addonv1alpha1.ConfigReference{reference("a", "h2", "")},
			desired: desired,
			want:    rollout.ClusterStatus{Name: "c1", Status: rollout.Progressing},
		},
		"desired, failed": {
			refs:    []addonv1alpha1.ConfigReference{reference("a", "h2", "")},
			conds:   progressingCond(ReasonFailed),
			desired: desired,
			want:    rollout.ClusterStatus{Name: "c1", Status: rollout.Failed, Since: t0},
		},
		"desired, failed with OCM's older reason": {
			refs:    []addonv1alpha1.ConfigReference{reference("a", "h2", "")},
			conds:   progressingCond(addonv1alpha1.ProgressingReasonUpgradeFailed),
			desired: desired,
			want:    rollout.ClusterStatus{Name: "c1", Status: rollout.Failed, Since: t0},
		},
		"applied": {
			refs:    []addonv1alpha1.ConfigReference{reference("a", "h2", "h2")},
			conds:   progressingCond(ReasonCompleted),
			desired: desired,
			want:    rollout.ClusterStatus{Name: "c1", Status: rollout.Succeeded, Since: t0},
		},
		"nothing to configure": {
			want: rollout.ClusterStatus{Name: "c1", Status: rollout.Succeeded},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "gpu"},
				Status: addonv1alpha1.ManagedClusterAddOnStatus{ConfigReferences: tc.refs, Conditions: tc.conds}}
			if diff := cmp.Diff(tc.want, rolloutState(mca, tc.desired)); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
		})
	}
}

// mcaIn is an MCA of cma in cluster, the hub's own when mine.
func mcaIn(cma *addonv1alpha1.ClusterManagementAddOn, cluster string, mine bool) *addonv1alpha1.ManagedClusterAddOn {
	m := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: cma.Name, UID: types.UID("uid-" + cluster)}}
	if mine {
		m.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(cma, addonv1alpha1.GroupVersion.WithKind("ClusterManagementAddOn"))}
	}
	return m
}

func TestPlanInstall(t *testing.T) {
	cma := cmaWith()
	other := cmaWith()
	other.UID = "an-older-cma"
	type want struct{ Create, Remove, Conflicts []string }
	cases := map[string]struct {
		required         []string
		removeUnselected bool
		mcas             []*addonv1alpha1.ManagedClusterAddOn
		want             want
	}{
		"new clusters get one": {
			required: []string{"c2", "c1"}, removeUnselected: true,
			mcas: []*addonv1alpha1.ManagedClusterAddOn{mcaIn(cma, "c1", true)},
			want: want{Create: []string{"c2"}},
		},
		"the hub's own leave with their cluster": {
			required: []string{"c1"}, removeUnselected: true,
			mcas: []*addonv1alpha1.ManagedClusterAddOn{mcaIn(cma, "c1", true), mcaIn(cma, "c2", true)},
			want: want{Remove: []string{"c2"}},
		},
		"not while a placement's decisions are unknown": {
			required: []string{"c1"}, removeUnselected: false,
			mcas: []*addonv1alpha1.ManagedClusterAddOn{mcaIn(cma, "c1", true), mcaIn(cma, "c2", true)},
		},
		"a user's add-on is never removed": {
			required: []string{"c1"}, removeUnselected: true,
			mcas: []*addonv1alpha1.ManagedClusterAddOn{mcaIn(cma, "c1", true), mcaIn(cma, "c3", false)},
		},
		"a user's add-on in a selected cluster is a conflict, not adopted": {
			required: []string{"c1", "c3"}, removeUnselected: true,
			mcas: []*addonv1alpha1.ManagedClusterAddOn{mcaIn(cma, "c1", true), mcaIn(cma, "c3", false)},
			want: want{Conflicts: []string{"c3/gpu"}},
		},
		"one made by an earlier add-on of the same name is not the hub's own": {
			required: []string{"c1"}, removeUnselected: true,
			mcas: []*addonv1alpha1.ManagedClusterAddOn{mcaIn(other, "c1", true), mcaIn(other, "c2", true)},
			want: want{Conflicts: []string{"c1/gpu"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			required := map[string]bool{}
			for _, c := range tc.required {
				required[c] = true
			}
			p := planInstall(cma, required, tc.removeUnselected, tc.mcas)
			got := want{Create: p.Create, Conflicts: p.Conflicts}
			for _, m := range p.Remove {
				got.Remove = append(got.Remove, m.Namespace)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProgressionCondition(t *testing.T) {
	type cond struct{ Status, Reason, Message string }
	cases := map[string]struct {
		upgrade                  bool
		progressing, done, total int
		want                     cond
	}{
		"installing":          {progressing: 1, done: 1, total: 3, want: cond{"True", "Installing", "2/3 installing..."}},
		"installed":           {done: 3, total: 3, want: cond{"False", "InstallSucceed", "3/3 install completed with no errors."}},
		"no cluster":          {want: cond{"True", "Installing", "0/0 installing..."}},
		"upgrading":           {upgrade: true, progressing: 1, total: 2, want: cond{"True", "Upgrading", "1/2 upgrading..."}},
		"upgraded":            {upgrade: true, done: 2, total: 2, want: cond{"False", "UpgradeSucceed", "2/2 upgrade completed with no errors."}},
		"none started":        {total: 4, want: cond{"True", "Installing", "0/4 installing..."}},
		"upgrade not started": {upgrade: true, total: 1, want: cond{"True", "Upgrading", "0/1 upgrading..."}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := progressionCondition(tc.upgrade, tc.progressing, tc.done, tc.total)
			if diff := cmp.Diff(tc.want, cond{string(c.Status), c.Reason, c.Message}); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
		})
	}
}
