package clusterset

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
)

func TestEmptyCondition(t *testing.T) {
	cases := map[string]struct {
		set     clusterv1beta2.ManagedClusterSet
		members int
		selErr  error
		want    metav1.Condition
	}{
		"one member": {
			set: *makeSet("blue").Obj(), members: 1,
			want: metav1.Condition{Type: "ClusterSetEmpty", Status: metav1.ConditionFalse, Reason: ReasonClustersSelected,
				Message: "1 ManagedCluster selected", ObservedGeneration: 1},
		},
		"many members": {
			set: *makeSet("blue").Obj(), members: 3,
			want: metav1.Condition{Type: "ClusterSetEmpty", Status: metav1.ConditionFalse, Reason: ReasonClustersSelected,
				Message: "3 ManagedClusters selected", ObservedGeneration: 1},
		},
		"empty, by label": {
			set: *makeSet("blue").Obj(),
			want: metav1.Condition{Type: "ClusterSetEmpty", Status: metav1.ConditionTrue, Reason: ReasonNoClusterMatched,
				Message:            "no ManagedCluster selected: label a cluster cluster.open-cluster-management.io/clusterset=blue to add it",
				ObservedGeneration: 1},
		},
		"empty, by selector": {
			set: *makeSet("t4").LabelSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"gpu": "t4"}}).Obj(),
			want: metav1.Condition{Type: "ClusterSetEmpty", Status: metav1.ConditionTrue, Reason: ReasonNoClusterMatched,
				Message:            "no ManagedCluster selected: no cluster has labels matching spec.clusterSelector.labelSelector gpu=t4",
				ObservedGeneration: 1},
		},
		"empty, global": {
			set: *makeSet("global").LabelSelector(&metav1.LabelSelector{}).Obj(),
			want: metav1.Condition{Type: "ClusterSetEmpty", Status: metav1.ConditionTrue, Reason: ReasonNoClusterMatched,
				Message: "no ManagedCluster selected: the set selects every cluster and the hub has none", ObservedGeneration: 1},
		},
		"empty, selector missing": {
			set: *makeSet("odd").LabelSelector(nil).Obj(),
			want: metav1.Condition{Type: "ClusterSetEmpty", Status: metav1.ConditionTrue, Reason: ReasonNoClusterMatched,
				Message:            "no ManagedCluster selected: spec.clusterSelector.labelSelector is not set; set it to select clusters",
				ObservedGeneration: 1},
		},
		"invalid selector": {
			set: *makeSet("bad").Obj(), selErr: errors.New("ManagedClusterSet bad: spec.clusterSelector.labelSelector is invalid: boom"),
			want: metav1.Condition{Type: "ClusterSetEmpty", Status: metav1.ConditionUnknown, Reason: ReasonInvalidClusterSelector,
				Message:            "ManagedClusterSet bad: spec.clusterSelector.labelSelector is invalid: boom; fix spec.clusterSelector",
				ObservedGeneration: 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, emptyCondition(&tc.set, tc.members, tc.selErr)); diff != "" {
				t.Errorf("emptyCondition() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBoundCondition(t *testing.T) {
	binding := &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "blue", Namespace: "team-a", Generation: 2},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "blue"},
	}
	set := makeSet("blue").Obj()
	deleting := makeSet("blue").Obj()
	deleting.DeletionTimestamp = &deletedAt
	cases := map[string]struct {
		set  *clusterv1beta2.ManagedClusterSet
		want metav1.Condition
	}{
		"set exists": {
			set: set,
			want: metav1.Condition{Type: "Bound", Status: metav1.ConditionTrue, Reason: ReasonClusterSetBound,
				Message: "ManagedClusterSet blue is bound to namespace team-a", ObservedGeneration: 2},
		},
		"set missing": {
			want: metav1.Condition{Type: "Bound", Status: metav1.ConditionFalse, Reason: ReasonClusterSetNotFound,
				Message:            "ManagedClusterSet blue does not exist: create it to bind it to namespace team-a, or delete this binding",
				ObservedGeneration: 2},
		},
		"set being deleted": {
			set: deleting,
			want: metav1.Condition{Type: "Bound", Status: metav1.ConditionFalse, Reason: ReasonClusterSetNotFound,
				Message:            "ManagedClusterSet blue is being deleted: recreate it once it is gone to bind it to namespace team-a, or delete this binding",
				ObservedGeneration: 2},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, boundCondition(binding, tc.set)); diff != "" {
				t.Errorf("boundCondition() (-want +got):\n%s", diff)
			}
		})
	}
}
