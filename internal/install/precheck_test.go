package install

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

func deploymentWith(ns, name string, labels map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
}

func TestCheckInstalledVersion(t *testing.T) {
	const ns, name = "open-cluster-management-hub", "flotilla-hub"
	ours := func(v string) map[string]string { return map[string]string{PartOfLabel: PartOf, VersionLabel: v} }
	cases := map[string]struct {
		existing []runtime.Object
		wantErr  []string
	}{
		"nothing installed":  {},
		"the same version":   {existing: []runtime.Object{deploymentWith(ns, name, ours("0.1.0"))}},
		"another version":    {existing: []runtime.Object{deploymentWith(ns, name, ours("0.0.9"))}, wantErr: []string{`version "0.0.9"`, `this is "0.1.0"`, "--upgrade"}},
		"not Flotilla's own": {existing: []runtime.Object{deploymentWith(ns, name, nil)}, wantErr: []string{"Flotilla did not install it", "another namespace"}},
	}
	for n, tc := range cases {
		t.Run(n, func(t *testing.T) {
			cs := fake.NewClientset(tc.existing...)
			err := CheckInstalledVersion(context.Background(), cs, ns, name, "0.1.0", "hub", "run `flotilla init --install --upgrade` to replace it")
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want one saying %q", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestCheckNoOCMHub(t *testing.T) {
	for _, d := range []*appsv1.Deployment{
		deploymentWith("open-cluster-management", "cluster-manager", nil),
		deploymentWith("open-cluster-management-hub", "cluster-manager-placement-controller", nil),
	} {
		err := CheckNoOCMHub(context.Background(), fake.NewClientset(d))
		if err == nil || !strings.Contains(err.Error(), d.Namespace+"/"+d.Name) || !strings.Contains(err.Error(), "clusteradm clean") {
			t.Errorf("with Deployment %s/%s: err = %v, want one naming it and the fix", d.Namespace, d.Name, err)
		}
	}
	if err := CheckNoOCMHub(context.Background(), fake.NewClientset()); err != nil {
		t.Errorf("an empty cluster: %v", err)
	}
}
