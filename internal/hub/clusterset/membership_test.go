package clusterset

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
)

func TestMembers(t *testing.T) {
	clusters := []clusterv1.ManagedCluster{
		makeCluster("c-blue").set("blue").label("gpu", "t4").obj(),
		makeCluster("a-blue").set("blue").obj(),
		makeCluster("red").set("red").label("gpu", "a100").obj(),
		makeCluster("bare").obj(),
		makeCluster("empty-label").set("").obj(),
		makeCluster("going").set("blue").deleting().obj(),
	}
	cases := map[string]struct {
		set         clusterv1beta2.ManagedClusterSet
		wantMembers []string
		wantErr     bool
	}{
		"by label": {
			set:         makeSet("blue").obj(),
			wantMembers: []string{"a-blue", "c-blue", "going"},
		},
		"by label, no cluster": {
			set: makeSet("green").obj(),
		},
		"empty selector type is the default, by label": {
			set:         makeSet("red").selectorType("").obj(),
			wantMembers: []string{"red"},
		},
		"a selector-typed set ignores the clusterset label": {
			set:         makeSet("blue").labelSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"gpu": "a100"}}).obj(),
			wantMembers: []string{"red"},
		},
		"selector with expressions": {
			set: makeSet("gpus").labelSelector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "gpu", Operator: metav1.LabelSelectorOpExists},
			}}).obj(),
			wantMembers: []string{"c-blue", "red"},
		},
		"empty selector selects every cluster": {
			set:         makeSet("global").labelSelector(&metav1.LabelSelector{}).obj(),
			wantMembers: []string{"a-blue", "bare", "c-blue", "empty-label", "going", "red"},
		},
		"missing selector selects none": {
			set: makeSet("nothing").labelSelector(nil).obj(),
		},
		"invalid selector": {
			set: makeSet("bad").labelSelector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "gpu", Operator: "Near"},
			}}).obj(),
			wantErr: true,
		},
		"unknown selector type": {
			set:     makeSet("odd").selectorType("ByName").obj(),
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Members(&tc.set, clusters)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Members() error = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantMembers, got); diff != "" {
				t.Errorf("Members() (-want +got):\n%s", diff)
			}
			// IsMember agrees with Members, cluster by cluster.
			for i := range clusters {
				in, err := IsMember(&tc.set, &clusters[i])
				if (err != nil) != tc.wantErr {
					t.Fatalf("IsMember(%s) error = %v, want error %v", clusters[i].Name, err, tc.wantErr)
				}
				if want := contains(tc.wantMembers, clusters[i].Name); in != want {
					t.Errorf("IsMember(%s) = %v, want %v", clusters[i].Name, in, want)
				}
			}
		})
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func TestSetsOf(t *testing.T) {
	sets := []clusterv1beta2.ManagedClusterSet{
		makeSet("default").obj(),
		makeSet("blue").obj(),
		makeSet("global").labelSelector(&metav1.LabelSelector{}).obj(),
		makeSet("t4").labelSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"gpu": "t4"}}).obj(),
		makeSet("bad").labelSelector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "gpu", Operator: "Near"},
		}}).obj(),
	}
	cases := map[string]struct {
		cluster  clusterv1.ManagedCluster
		wantSets []string
	}{
		"labeled and matching a selector": {
			cluster:  makeCluster("c").set("blue").label("gpu", "t4").obj(),
			wantSets: []string{"blue", "global", "t4"},
		},
		"labeled for a set that does not exist": {
			cluster:  makeCluster("c").set("green").obj(),
			wantSets: []string{"global"},
		},
		"default label": {
			cluster:  makeCluster("c").set("default").obj(),
			wantSets: []string{"default", "global"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantSets, SetsOf(&tc.cluster, sets)); diff != "" {
				t.Errorf("SetsOf() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultSetSpecs(t *testing.T) {
	clusters := []clusterv1.ManagedCluster{
		makeCluster("d").set(DefaultSetName).obj(),
		makeCluster("other").set("other").obj(),
		makeCluster("bare").obj(),
	}
	want := map[string][]string{
		DefaultSetName: {"d"},
		GlobalSetName:  {"bare", "d", "other"},
	}
	got := map[string][]string{}
	for _, s := range DefaultSetSpecs() {
		m, err := Members(&s, clusters)
		if err != nil {
			t.Fatalf("Members(%s): %v", s.Name, err)
		}
		got[s.Name] = m
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("members of the default sets (-want +got):\n%s", diff)
	}
}

func TestNeedsDefaultLabel(t *testing.T) {
	cases := map[string]struct {
		cluster clusterv1.ManagedCluster
		want    bool
	}{
		"no labels":               {cluster: makeCluster("c").obj(), want: true},
		"other labels":            {cluster: makeCluster("c").label("env", "prod").obj(), want: true},
		"labeled for another set": {cluster: makeCluster("c").set("blue").obj()},
		"empty label is kept":     {cluster: makeCluster("c").set("").obj()},
		"being deleted":           {cluster: makeCluster("c").deleting().obj()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := needsDefaultLabel(&tc.cluster); got != tc.want {
				t.Errorf("needsDefaultLabel() = %v, want %v", got, tc.want)
			}
		})
	}
}
