package explain

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
)

func TestDecodeBody(t *testing.T) {
	const head = "apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\n"
	tm := metav1.TypeMeta{APIVersion: "cluster.open-cluster-management.io/v1beta1", Kind: "Placement"}
	cases := map[string]struct {
		body    string
		want    *clusterv1beta1.Placement
		wantErr string
	}{
		"yaml": {
			body: head + "metadata: {name: p}\nspec: {numberOfClusters: 2}\n",
			want: &clusterv1beta1.Placement{TypeMeta: tm, ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "p"}, Spec: clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](2)}},
		},
		"json, same namespace": {
			body: `{"apiVersion":"cluster.open-cluster-management.io/v1beta1","kind":"Placement","metadata":{"namespace":"ml"}}`,
			want: &clusterv1beta1.Placement{TypeMeta: tm, ObjectMeta: metav1.ObjectMeta{Namespace: "ml"}},
		},
		"empty":              {body: " \n", wantErr: "the body is empty"},
		"not yaml":           {body: "a: [", wantErr: "neither JSON nor YAML"},
		"not json":           {body: "{", wantErr: "not an object"},
		"not an object":      {body: "[1]", wantErr: "not an object"},
		"wrong kind":         {body: "apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: PlacementDecision\n", wantErr: `kind "PlacementDecision": want`},
		"wrong version":      {body: "apiVersion: cluster.open-cluster-management.io/v1alpha1\nkind: Placement\n", wantErr: `apiVersion "cluster.open-cluster-management.io/v1alpha1"`},
		"unknown field":      {body: head + "spec: {clusterSet: [a]}\n", wantErr: `unknown field "spec.clusterSet"`},
		"duplicate field":    {body: `{"apiVersion":"cluster.open-cluster-management.io/v1beta1","kind":"Placement","spec":{"numberOfClusters":1,"numberOfClusters":2}}`, wantErr: `duplicate field "spec.numberOfClusters"`},
		"wrong type":         {body: head + "spec: {numberOfClusters: two}\n", wantErr: "spec.numberOfClusters"},
		"other namespace":    {body: head + "metadata: {name: p, namespace: prod}\n", wantErr: `metadata.namespace "prod" differs from the path's namespace "ml"`},
		"case-sensitive key": {body: head + "spec: {NumberOfClusters: 2}\n", wantErr: `unknown field "spec.NumberOfClusters"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := decodeBody([]byte(tc.body), "ml")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one holding %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("placement (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParsePath(t *testing.T) {
	cases := map[string]struct {
		want request
		ok   bool
	}{
		"/explain/namespaces/ml/placements/gpu": {request{"ml", "gpu"}, true},
		"/explain/namespaces/ml/placements":     {request{namespace: "ml"}, true},
		"/explain/namespaces/ml/placements/":    {},
		"/explain/namespaces//placements/gpu":   {},
		"/explain/namespaces/ml/other/gpu":      {},
		"/explain/namespaces/ml/placements/a/b": {},
		"/other":                                {},
	}
	for path, tc := range cases {
		got, ok := parsePath(path)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parsePath(%q) = %+v, %v; want %+v, %v", path, got, ok, tc.want, tc.ok)
		}
	}
}
