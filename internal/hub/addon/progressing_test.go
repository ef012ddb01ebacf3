package addon

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
)

// agentWork is an add-on's ManifestWork rendered with hash of config ns/a, Applied and Available
// for its generation when ready.
func agentWork(name, hash string, ready bool) workv1.ManifestWork {
	w := workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: name, Generation: 2, Labels: map[string]string{AddonLabel: "gpu"}}}
	if hash != "" {
		w.Annotations = map[string]string{ConfigSpecHashAnnotation: fmt.Sprintf(`{"addondeploymentconfigs.addon.open-cluster-management.io/ns/a":%q}`, hash)}
	}
	gen := int64(1)
	if ready {
		gen = 2
	}
	for _, t := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
		w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionTrue, ObservedGeneration: gen})
	}
	return w
}

func TestProgressingStatus(t *testing.T) {
	applied := []metav1.Condition{{Type: addonv1alpha1.ManagedClusterAddOnManifestApplied, Status: metav1.ConditionTrue}}
	type want struct {
		Status, Reason, Message string
		LastApplied             string
	}
	cases := map[string]struct {
		configs []addonv1alpha1.AddOnConfig
		conds   []metav1.Condition
		works   []workv1.ManifestWork
		want    want
	}{
		"a kind the add-on does not support": {
			configs: []addonv1alpha1.AddOnConfig{cfg(cm, "c1", "x")},
			conds:   applied,
			want: want{Status: "False", Reason: "ConfigurationUnsupported",
				Message: "Configuration with gvr /configmaps is not supported for this addon (spec.configs[0]): use one of the kinds in status.supportedConfigs"},
		},
		"no manifests applied yet": {
			want: want{Status: "False", Reason: "WaitingForManifestApplied", Message: "Waiting for ManagedClusterAddOn ManifestApplied condition"},
		},
		"no works": {
			conds: applied,
			want:  want{Status: "True", Reason: "Progressing", Message: "progressing... no addon works"},
		},
		"a work of older configs": {
			conds: applied, works: []workv1.ManifestWork{agentWork("addon-gpu-deploy-0", "h1", true)},
			want: want{Status: "True", Reason: "Progressing", Message: "progressing... mca and work configs mismatch"},
		},
		"a work not ready for its generation": {
			conds: applied, works: []workv1.ManifestWork{agentWork("addon-gpu-deploy-0", "h2", false)},
			want: want{Status: "True", Reason: "Progressing", Message: "progressing... work is not ready"},
		},
		"every work ready with the desired configs": {
			conds: applied,
			works: []workv1.ManifestWork{agentWork("addon-gpu-deploy-0", "h2", true), agentWork("addon-gpu-pre-delete", "h0", false)},
			want:  want{Status: "False", Reason: "Completed", Message: "completed with no errors.", LastApplied: "h2"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "gpu", Generation: 1},
				Spec: addonv1alpha1.ManagedClusterAddOnSpec{Configs: tc.configs},
				Status: addonv1alpha1.ManagedClusterAddOnStatus{SupportedConfigs: []addonv1alpha1.ConfigGroupResource{adc},
					Conditions: tc.conds, ConfigReferences: []addonv1alpha1.ConfigReference{reference("a", "h2", "")}}}
			st := progressingStatus(mca, tc.works, metav1.NewTime(t0))
			c := meta.FindStatusCondition(st.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing)
			got := want{Status: string(c.Status), Reason: c.Reason, Message: c.Message}
			if la := st.ConfigReferences[0].LastAppliedConfig; la != nil {
				got.LastApplied = la.SpecHash
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Progressing (-want +got):\n%s", diff)
			}
			if c.ObservedGeneration != 1 {
				t.Errorf("Progressing has observedGeneration %d, want the add-on's 1", c.ObservedGeneration)
			}
		})
	}
}

func TestConfigHashKey(t *testing.T) {
	cases := map[string]struct {
		gr   addonv1alpha1.ConfigGroupResource
		ref  addonv1alpha1.ConfigReferent
		want string
	}{
		"namespaced, with a group": {adc, ref("ns", "a"), "addondeploymentconfigs.addon.open-cluster-management.io/ns/a"},
		"cluster-scoped":           {tpl, ref("", "t"), "addontemplates.addon.open-cluster-management.io//t"},
		"core group":               {cm, ref("ns", "c"), "configmaps/ns/c"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ConfigHashKey(tc.gr, tc.ref)); diff != "" {
				t.Errorf("key (-want +got):\n%s", diff)
			}
		})
	}
}

// Until the lifecycle controller has written the add-on's status.supportedConfigs from its
// ClusterManagementAddOn, the progressing controller writes nothing: every spec.configs entry
// would look unsupported (on an add-on's first pass over 1,000 clusters, a false
// ConfigurationUnsupported on each, and a write racing the lifecycle controller's).
func TestProgressingWaitsForSupportedConfigs(t *testing.T) {
	all := []addonv1alpha1.ConfigGroupResource{tpl, adc, cm}
	cases := map[string]struct {
		supported  []addonv1alpha1.ConfigGroupResource
		wantReason string
	}{
		"not written yet":  {supported: nil, wantReason: ""},
		"an older list":    {supported: []addonv1alpha1.ConfigGroupResource{tpl}, wantReason: ""},
		"the current list": {supported: all, wantReason: ReasonWaitingForManifestApplied},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "gpu", Generation: 1},
				Spec:   addonv1alpha1.ManagedClusterAddOnSpec{Configs: []addonv1alpha1.AddOnConfig{cfg(adc, "c1", "x")}},
				Status: addonv1alpha1.ManagedClusterAddOnStatus{SupportedConfigs: tc.supported}}
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(cmaWith(), mca).WithStatusSubresource(mca).Build()
			r := &ProgressingReconciler{Client: c, Clock: clocktesting.NewFakePassiveClock(t0)}
			if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(mca)}); err != nil {
				t.Fatal(err)
			}
			got := &addonv1alpha1.ManagedClusterAddOn{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(mca), got); err != nil {
				t.Fatal(err)
			}
			reason := ""
			if cond := meta.FindStatusCondition(got.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing); cond != nil {
				reason = cond.Reason
			}
			if diff := cmp.Diff(tc.wantReason, reason); diff != "" {
				t.Errorf("Progressing reason (-want +got):\n%s", diff)
			}
		})
	}
}

// A controller's write of an add-on's status carries the Progressing condition that follows from
// it (Progress), so the progressing controller, woken by that write, has nothing to add; it
// reads only the add-on's own works, and leaves the status alone while the progressing
// controller would (supported kinds not written yet, the add-on going).
func TestProgressFollowsTheWrite(t *testing.T) {
	kinds := []addonv1alpha1.ConfigGroupResource{tpl, adc, cm}
	applied := metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnManifestApplied, Status: metav1.ConditionTrue}
	elsewhere := agentWork("addon-gpu-deploy-0", "h2", true)
	elsewhere.Namespace = "c2"
	otherAddon := agentWork("addon-cpu-deploy-0", "h2", true)
	otherAddon.Labels[AddonLabel] = "cpu"
	type want struct {
		Reason, LastApplied string
		Changed             bool
	}
	cases := map[string]struct {
		supported []addonv1alpha1.ConfigGroupResource
		conds     []metav1.Condition
		works     []workv1.ManifestWork
		deleting  bool
		want      want
	}{
		"the lifecycle controller's first write (Configured)": {
			supported: kinds, want: want{Reason: ReasonWaitingForManifestApplied, Changed: true},
		},
		"the template controller's write once its work is ready": {
			supported: kinds, conds: []metav1.Condition{applied},
			works: []workv1.ManifestWork{agentWork("addon-gpu-deploy-0", "h2", true)},
			want:  want{Reason: ReasonCompleted, LastApplied: "h2", Changed: true},
		},
		"works of another cluster or add-on are not read": {
			supported: kinds, conds: []metav1.Condition{applied}, works: []workv1.ManifestWork{elsewhere, otherAddon},
			want: want{Reason: ReasonProgressing, Changed: true},
		},
		"supported kinds not written yet": {supported: nil, conds: []metav1.Condition{applied}},
		"the add-on is going":             {supported: kinds, deleting: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "gpu", Generation: 1}}
			if tc.deleting {
				mca.DeletionTimestamp = &metav1.Time{Time: t0}
			}
			st := addonv1alpha1.ManagedClusterAddOnStatus{SupportedConfigs: tc.supported, Conditions: tc.conds,
				ConfigReferences: []addonv1alpha1.ConfigReference{reference("a", "h2", "")}}
			b := fake.NewClientBuilder().WithScheme(scheme.Scheme)
			for i := range tc.works {
				b = b.WithObjects(&tc.works[i])
			}
			got, err := Progress(context.Background(), b.Build(), cmaWith(), mca, st, metav1.NewTime(t0))
			if err != nil {
				t.Fatal(err)
			}
			var g want
			if c := meta.FindStatusCondition(got.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing); c != nil {
				g.Reason = c.Reason
			}
			if la := got.ConfigReferences[0].LastAppliedConfig; la != nil {
				g.LastApplied = la.SpecHash
			}
			g.Changed = ProgressChanged(st, got)
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("Progress (-want +got):\n%s", diff)
			}
		})
	}
}
