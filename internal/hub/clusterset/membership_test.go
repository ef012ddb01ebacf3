package clusterset

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla/flotilla/api/cluster/v1beta2"
	"github.com/flotilla/flotilla/internal/apitest"
)

func TestMembers(t *testing.T) {
	clusters := []clusterv1.ManagedCluster{
		*apitest.MakeCluster("c-blue").ClusterSet("blue").Label("gpu", "t4").Obj(),
		*apitest.MakeCluster("a-blue").ClusterSet("blue").Obj(),
		*apitest.MakeCluster("red").ClusterSet("red").Label("gpu", "a100").Obj(),
		*apitest.MakeCluster("bare").Obj(),
		*apitest.MakeCluster("empty-label").ClusterSet("").Obj(),
		*apitest.MakeCluster("going").ClusterSet("blue").Deleting(deletedAt.Time).Finalizer("test").Obj(),
	}
	cases := map[string]struct {
		set         clusterv1beta2.ManagedClusterSet
		wantMembers []string
		wantErr     bool
	}{
		"by label": {
			set:         *makeSet("blue").Obj(),
			wantMembers: []string{"a-blue", "c-blue", "going"},
		},
		"by label, no cluster": {
			set: *makeSet("green").Obj(),
		},
		"empty selector type is the default, by label": {
			set:         *makeSet("red").SelectorType("").Obj(),
			wantMembers: []string{"red"},
		},
		"a selector-typed set ignores the clusterset label": {
			set:         *makeSet("blue").LabelSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"gpu": "a100"}}).Obj(),
			wantMembers: []string{"red"},
		},
		"selector with expressions": {
			set: *makeSet("gpus").LabelSelector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "gpu", Operator: metav1.LabelSelectorOpExists},
			}}).Obj(),
			wantMembers: []string{"c-blue", "red"},
		},
		"empty selector selects every cluster": {
			set:         *makeSet("global").LabelSelector(&metav1.LabelSelector{}).Obj(),
			wantMembers: []string{"a-blue", "bare", "c-blue", "empty-label", "going", "red"},
		},
		"missing selector selects none": {
			set: *makeSet("nothing").LabelSelector(nil).Obj(),
		},
		"invalid selector": {
			set: *makeSet("bad").LabelSelector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "gpu", Operator: "Near"},
			}}).Obj(),
			wantErr: true,
		},
		"unknown selector type": {
			set:     *makeSet("odd").SelectorType("ByName").Obj(),
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
		*makeSet("default").Obj(),
		*makeSet("blue").Obj(),
		*makeSet("global").LabelSelector(&metav1.LabelSelector{}).Obj(),
		*makeSet("t4").LabelSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"gpu": "t4"}}).Obj(),
		*makeSet("bad").LabelSelector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "gpu", Operator: "Near"},
		}}).Obj(),
	}
	cases := map[string]struct {
		cluster  clusterv1.ManagedCluster
		wantSets []string
	}{
		"labeled and matching a selector": {
			cluster:  *apitest.MakeCluster("c").ClusterSet("blue").Label("gpu", "t4").Obj(),
			wantSets: []string{"blue", "global", "t4"},
		},
		"labeled for a set that does not exist": {
			cluster:  *apitest.MakeCluster("c").ClusterSet("green").Obj(),
			wantSets: []string{"global"},
		},
		"default label": {
			cluster:  *apitest.MakeCluster("c").ClusterSet("default").Obj(),
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
		*apitest.MakeCluster("d").ClusterSet(DefaultSetName).Obj(),
		*apitest.MakeCluster("other").ClusterSet("other").Obj(),
		*apitest.MakeCluster("bare").Obj(),
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
		"no labels":               {cluster: *apitest.MakeCluster("c").Obj(), want: true},
		"other labels":            {cluster: *apitest.MakeCluster("c").Label("env", "prod").Obj(), want: true},
		"labeled for another set": {cluster: *apitest.MakeCluster("c").ClusterSet("blue").Obj()},
		"empty label is kept":     {cluster: *apitest.MakeCluster("c").ClusterSet("").Obj()},
		"being deleted":           {cluster: *apitest.MakeCluster("c").Deleting(deletedAt.Time).Finalizer("test").Obj()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := needsDefaultLabel(&tc.cluster); got != tc.want {
				t.Errorf("needsDefaultLabel() = %v, want %v", got, tc.want)
			}
		})
	}
}
