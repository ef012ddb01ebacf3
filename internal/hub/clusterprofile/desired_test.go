package clusterprofile

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	mcv1alpha1 "github.com/flotilla/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla/flotilla/internal/apitest"
)

const ns = "team-a"

func TestDesiredProfiles(t *testing.T) {
	sets := []clusterv1beta2.ManagedClusterSet{
		*makeSet("blue").Obj(),
		*makeSet("red").Obj(),
		*makeSet("t4").LabelSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"gpu": "t4"}}).Obj(),
		*makeSet("going").Deleting(deletedAt.Time).Finalizer("test").Obj(),
		*makeSet("bad").LabelSelector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "gpu", Operator: "Near"},
		}}).Obj(),
	}
	clusters := []clusterv1.ManagedCluster{
		*apitest.MakeCluster("blue-1").ClusterSet("blue").Label("gpu", "t4").Obj(),
		*apitest.MakeCluster("blue-2").ClusterSet("blue").Obj(),
		*apitest.MakeCluster("red-1").ClusterSet("red").Obj(),
		*apitest.MakeCluster("red-t4").ClusterSet("red").Label("gpu", "t4").Obj(),
		*apitest.MakeCluster("going-1").ClusterSet("going").Obj(),
		*apitest.MakeCluster("blue-leaving").ClusterSet("blue").Deleting(deletedAt.Time).Finalizer("test").Obj(),
	}
	cases := map[string]struct {
		bindings  []clusterv1beta2.ManagedClusterSetBinding
		wantNames []string
	}{
		"no binding": {},
		"bound set": {
			bindings:  []clusterv1beta2.ManagedClusterSetBinding{*makeBinding(ns, "blue").Condition(bound(metav1.ConditionTrue)).Obj()},
			wantNames: []string{"blue-1", "blue-2"},
		},
		"overlapping sets give one profile per cluster": {
			bindings: []clusterv1beta2.ManagedClusterSetBinding{
				*makeBinding(ns, "blue").Condition(bound(metav1.ConditionTrue)).Obj(),
				*makeBinding(ns, "t4").Condition(bound(metav1.ConditionTrue)).Obj(),
			},
			wantNames: []string{"blue-1", "blue-2", "red-t4"},
		},
		"binding not bound": {
			bindings: []clusterv1beta2.ManagedClusterSetBinding{*makeBinding(ns, "blue").Condition(bound(metav1.ConditionFalse)).Obj()},
		},
		"binding without a Bound condition yet": {
			bindings: []clusterv1beta2.ManagedClusterSetBinding{*makeBinding(ns, "blue").Obj()},
		},
		"Bound written for an earlier generation": {
			bindings: []clusterv1beta2.ManagedClusterSetBinding{*makeBinding(ns, "blue").Condition(staleBound()).Obj()},
		},
		"binding being deleted": {
			bindings: []clusterv1beta2.ManagedClusterSetBinding{*makeBinding(ns, "blue").Condition(bound(metav1.ConditionTrue)).Deleting(deletedAt.Time).Finalizer("test").Obj()},
		},
		"set being deleted": {
			bindings: []clusterv1beta2.ManagedClusterSetBinding{*makeBinding(ns, "going").Condition(bound(metav1.ConditionTrue)).Obj()},
		},
		"bound set missing from the cache": {
			bindings: []clusterv1beta2.ManagedClusterSetBinding{*makeBinding(ns, "green").Condition(bound(metav1.ConditionTrue)).Obj()},
		},
		"set with an invalid selector": {
			bindings: []clusterv1beta2.ManagedClusterSetBinding{*makeBinding(ns, "bad").Condition(bound(metav1.ConditionTrue)).Obj()},
		},
		"one bad binding does not hide another": {
			bindings: []clusterv1beta2.ManagedClusterSetBinding{
				*makeBinding(ns, "bad").Condition(bound(metav1.ConditionTrue)).Obj(),
				*makeBinding(ns, "red").Condition(bound(metav1.ConditionTrue)).Obj(),
			},
			wantNames: []string{"red-1", "red-t4"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := desiredProfiles(ns, tc.bindings, sets, clusters, false)
			if diff := cmp.Diff(tc.wantNames, slices.Sorted(maps.Keys(got))); diff != "" {
				t.Errorf("desiredProfiles() names (-want +got):\n%s", diff)
			}
			for name, p := range got {
				if p.Name != name || p.Namespace != ns {
					t.Errorf("desiredProfiles()[%s] is %s/%s, want %s/%s", name, p.Namespace, p.Name, ns, name)
				}
			}
		})
	}
}

func TestProfileFor(t *testing.T) {
	objectMeta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{
			"x-k8s.io/cluster-manager":                "open-cluster-management",
			"open-cluster-management.io/cluster-name": name,
		}}
	}
	spec := func(name string) mcv1alpha1.ClusterProfileSpec {
		return mcv1alpha1.ClusterProfileSpec{DisplayName: name, ClusterManager: mcv1alpha1.ClusterManager{Name: "open-cluster-management"}}
	}
	cases := map[string]struct {
		cluster clusterv1.ManagedCluster
		want    *mcv1alpha1.ClusterProfile
	}{
		"a cluster that reports everything": {
			cluster: *apitest.MakeCluster("east").Version("v1.37.2").
				Claim("id.k8s.io", "east-uid").Claim("region.open-cluster-management.io", "us-east-1").
				Condition(cond(clusterv1.ManagedClusterConditionJoined, metav1.ConditionTrue, "ManagedClusterJoined", "joined")).
				Condition(cond(clusterv1.ManagedClusterConditionAvailable, metav1.ConditionFalse, "ManagedClusterKubeAPIServerUnavailable", "probe failed")).
				Condition(cond(clusterv1.ManagedClusterConditionHubAccepted, metav1.ConditionTrue, "HubClusterAdminAccepted", "accepted")).
				Obj(),
			want: &mcv1alpha1.ClusterProfile{
				ObjectMeta: objectMeta("east"),
				Spec:       spec("east"),
				Status: mcv1alpha1.ClusterProfileStatus{
					Version: mcv1alpha1.ClusterVersion{Kubernetes: "v1.37.2"},
					Properties: []mcv1alpha1.Property{
						{Name: "id.k8s.io", Value: "east-uid"},
						{Name: "region.open-cluster-management.io", Value: "us-east-1"},
					},
					Conditions: []metav1.Condition{
						{Type: "ControlPlaneHealthy", Status: metav1.ConditionFalse, Reason: "ManagedClusterKubeAPIServerUnavailable", Message: "probe failed"},
						{Type: "Joined", Status: metav1.ConditionTrue, Reason: "ManagedClusterJoined", Message: "joined"},
						{Type: "AccessProviderReady", Status: metav1.ConditionFalse, Reason: ReasonNotAccepted,
							Message: "ManagedCluster east is not accepted (spec.hubAcceptsClient is false): no access provider until a hub administrator accepts it"},
					},
				},
			},
		},
		"a new cluster that reported nothing": {
			cluster: *apitest.MakeCluster("new").Obj(),
			want: &mcv1alpha1.ClusterProfile{
				ObjectMeta: objectMeta("new"),
				Spec:       spec("new"),
				Status: mcv1alpha1.ClusterProfileStatus{Conditions: []metav1.Condition{
					{Type: "ControlPlaneHealthy", Status: metav1.ConditionUnknown, Reason: ReasonConditionMissing,
						Message: "ManagedCluster new has not reported condition ManagedClusterConditionAvailable yet"},
					{Type: "Joined", Status: metav1.ConditionUnknown, Reason: ReasonConditionMissing,
						Message: "ManagedCluster new has not reported condition ManagedClusterJoined yet"},
					{Type: "AccessProviderReady", Status: metav1.ConditionFalse, Reason: ReasonNotAccepted,
						Message: "ManagedCluster new is not accepted (spec.hubAcceptsClient is false): no access provider until a hub administrator accepts it"},
				}},
			},
		},
		"duplicate claims and a version too long for a profile": {
			cluster: *apitest.MakeCluster("odd").Version("v1.37.2-"+strings.Repeat("x", 60)).
				Claim("platform.open-cluster-management.io", "AWS").Claim("platform.open-cluster-management.io", "GCP").
				Condition(cond(clusterv1.ManagedClusterConditionAvailable, metav1.ConditionUnknown, "", "lease expired")).
				Obj(),
			want: &mcv1alpha1.ClusterProfile{
				ObjectMeta: objectMeta("odd"),
				Spec:       spec("odd"),
				Status: mcv1alpha1.ClusterProfileStatus{
					Properties: []mcv1alpha1.Property{{Name: "platform.open-cluster-management.io", Value: "AWS"}},
					Conditions: []metav1.Condition{
						{Type: "ControlPlaneHealthy", Status: metav1.ConditionUnknown, Reason: "ManagedClusterConditionAvailable", Message: "lease expired"},
						{Type: "Joined", Status: metav1.ConditionUnknown, Reason: ReasonConditionMissing,
							Message: "ManagedCluster odd has not reported condition ManagedClusterJoined yet"},
						{Type: "AccessProviderReady", Status: metav1.ConditionFalse, Reason: ReasonNotAccepted,
							Message: "ManagedCluster odd is not accepted (spec.hubAcceptsClient is false): no access provider until a hub administrator accepts it"},
					},
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, profileFor(ns, &tc.cluster, false)); diff != "" {
				t.Errorf("profileFor() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergeStatus(t *testing.T) {
	earlier := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(earlier.Add(time.Hour))
	healthy := func(status metav1.ConditionStatus, reason string, gen int64, at metav1.Time) metav1.Condition {
		return metav1.Condition{Type: "ControlPlaneHealthy", Status: status, Reason: reason, ObservedGeneration: gen, LastTransitionTime: at}
	}
	other := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Other", LastTransitionTime: earlier}
	access := []mcv1alpha1.AccessProvider{{Name: "kubeconfig"}}
	want := mcv1alpha1.ClusterProfileStatus{
		Version:    mcv1alpha1.ClusterVersion{Kubernetes: "v1.37.2"},
		Properties: []mcv1alpha1.Property{{Name: "id.k8s.io", Value: "uid"}},
		Conditions: []metav1.Condition{{Type: "ControlPlaneHealthy", Status: metav1.ConditionTrue, Reason: "Available"}},
	}
	cases := map[string]struct {
		cur         mcv1alpha1.ClusterProfileStatus
		wantStatus  mcv1alpha1.ClusterProfileStatus
		wantChanged bool
	}{
		"new profile": {
			wantStatus: mcv1alpha1.ClusterProfileStatus{
				Version: want.Version, Properties: want.Properties,
				Conditions: []metav1.Condition{healthy(metav1.ConditionTrue, "Available", 1, now)},
			},
			wantChanged: true,
		},
		"up to date: transition time kept": {
			cur: mcv1alpha1.ClusterProfileStatus{
				Version: want.Version, Properties: want.Properties,
				Conditions: []metav1.Condition{healthy(metav1.ConditionTrue, "Available", 1, earlier)},
			},
			wantStatus: mcv1alpha1.ClusterProfileStatus{
				Version: want.Version, Properties: want.Properties,
				Conditions: []metav1.Condition{healthy(metav1.ConditionTrue, "Available", 1, earlier)},
			},
		},
		"condition flips: transition time moves": {
			cur: mcv1alpha1.ClusterProfileStatus{
				Version: want.Version, Properties: want.Properties,
				Conditions: []metav1.Condition{healthy(metav1.ConditionFalse, "Unavailable", 1, earlier)},
			},
			wantStatus: mcv1alpha1.ClusterProfileStatus{
				Version: want.Version, Properties: want.Properties,
				Conditions: []metav1.Condition{healthy(metav1.ConditionTrue, "Available", 1, now)},
			},
			wantChanged: true,
		},
		"version and properties replaced; other conditions and access providers kept": {
			cur: mcv1alpha1.ClusterProfileStatus{
				Version:         mcv1alpha1.ClusterVersion{Kubernetes: "v1.36.0"},
				Properties:      []mcv1alpha1.Property{{Name: "id.k8s.io", Value: "uid"}, {Name: "gone", Value: "x"}},
				Conditions:      []metav1.Condition{other, healthy(metav1.ConditionTrue, "Available", 1, earlier)},
				AccessProviders: access,
			},
			wantStatus: mcv1alpha1.ClusterProfileStatus{
				Version: want.Version, Properties: want.Properties,
				Conditions:      []metav1.Condition{other, healthy(metav1.ConditionTrue, "Available", 1, earlier)},
				AccessProviders: access,
			},
			wantChanged: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, changed := mergeStatus(tc.cur, want, 1, now)
			if diff := cmp.Diff(tc.wantStatus, got); diff != "" {
				t.Errorf("mergeStatus() (-want +got):\n%s", diff)
			}
			if changed != tc.wantChanged {
				t.Errorf("mergeStatus() changed = %v, want %v", changed, tc.wantChanged)
			}
		})
	}
}

func TestMergeMeta(t *testing.T) {
	want := profileFor(ns, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "east"}}, false)
	cases := map[string]struct {
		cur         *mcv1alpha1.ClusterProfile
		wantLabels  map[string]string
		wantDisplay string
		wantChanged bool
	}{
		"up to date": {
			cur:         want.DeepCopy(),
			wantLabels:  want.Labels,
			wantDisplay: "east",
		},
		"user labels kept, ours restored, display name fixed": {
			cur: &mcv1alpha1.ClusterProfile{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
					"x-k8s.io/cluster-manager":                "open-cluster-management",
					"open-cluster-management.io/cluster-name": "west",
					"team": "ml",
				}},
				Spec: mcv1alpha1.ClusterProfileSpec{DisplayName: "East (old)"},
			},
			wantLabels: map[string]string{
				"x-k8s.io/cluster-manager":                "open-cluster-management",
				"open-cluster-management.io/cluster-name": "east",
				"team": "ml",
			},
			wantDisplay: "east",
			wantChanged: true,
		},
		"no labels at all": {
			cur:         &mcv1alpha1.ClusterProfile{Spec: mcv1alpha1.ClusterProfileSpec{DisplayName: "east"}},
			wantLabels:  want.Labels,
			wantDisplay: "east",
			wantChanged: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			differs := metaDiffers(tc.cur, want)
			changed := mergeMeta(tc.cur, want)
			if differs != changed {
				t.Errorf("metaDiffers() = %v, mergeMeta() changed = %v: they must agree", differs, changed)
			}
			if diff := cmp.Diff(tc.wantLabels, tc.cur.Labels); diff != "" {
				t.Errorf("mergeMeta() labels (-want +got):\n%s", diff)
			}
			if tc.cur.Spec.DisplayName != tc.wantDisplay {
				t.Errorf("mergeMeta() displayName = %q, want %q", tc.cur.Spec.DisplayName, tc.wantDisplay)
			}
			if changed != tc.wantChanged {
				t.Errorf("mergeMeta() changed = %v, want %v", changed, tc.wantChanged)
			}
		})
	}
}

func TestProfileInputsChanged(t *testing.T) {
	base := func() *apitest.ClusterWrapper {
		return apitest.MakeCluster("east").ClusterSet("blue").Version("v1.37.2").Claim("id.k8s.io", "uid").Accepted().
			Condition(cond(clusterv1.ManagedClusterConditionAvailable, metav1.ConditionTrue, "Available", "ok"))
	}
	withCapacity := *base().Obj()
	withCapacity.Status.Capacity = clusterv1.ResourceList{clusterv1.ResourceCPU: {}}
	denied := *base().Obj()
	denied.Spec.HubAcceptsClient = false
	cases := map[string]struct {
		updated clusterv1.ManagedCluster
		want    bool
	}{
		"nothing":                          {updated: *base().Obj()},
		"capacity":                         {updated: withCapacity},
		"a condition profiles do not show": {updated: *base().Condition(cond(clusterv1.ManagedClusterConditionClockSynced, metav1.ConditionTrue, "Synced", "")).Obj()},
		"a label":                          {updated: *base().Label("gpu", "t4").Obj(), want: true},
		"the version":                      {updated: *base().Version("v1.37.3").Obj(), want: true},
		"a claim":                          {updated: *base().Claim("region.open-cluster-management.io", "eu").Obj(), want: true},
		"deletion":                         {updated: *base().Deleting(deletedAt.Time).Finalizer("test").Obj(), want: true},
		"Joined": {
			updated: *base().Condition(cond(clusterv1.ManagedClusterConditionJoined, metav1.ConditionTrue, "ManagedClusterJoined", "")).Obj(),
			want:    true,
		},
		"denied":            {updated: denied, want: true},
		"an API server URL": {updated: *base().ClientConfig("https://api.east.example.com:6443", nil).Obj(), want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old := base().Obj()
			if got := profileInputsChanged.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: &tc.updated}); got != tc.want {
				t.Errorf("profileInputsChanged.Update() = %v, want %v", got, tc.want)
			}
		})
	}
}
