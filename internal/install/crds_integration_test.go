//go:build integration

package install_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla/flotilla/config/crd"
	"github.com/flotilla/flotilla/internal/install"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }

func results(names []string, r install.Result) map[string]install.Result {
	out := map[string]install.Result{}
	for _, n := range names {
		out[n] = r
	}
	return out
}

func TestInstallIsIdempotentAndDryRunChangesNothing(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx := context.Background()
	crds, err := crd.All()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range crds {
		names = append(names, c.Name)
	}
	cs, err := apiextclient.NewForConfig(env.Hub.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range names {
			_ = cs.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})

	// A dry run on an empty cluster says everything would be created, and creates nothing.
	var out bytes.Buffer
	got, err := install.CRDs(ctx, env.Hub.RESTConfig(), crds, install.Options{DryRun: true, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(results(names, install.WouldCreate), got); diff != "" {
		t.Errorf("dry run on an empty cluster (-want +got):\n%s", diff)
	}
	if !strings.Contains(out.String(), "customresourcedefinition/"+names[0]+" would be created") {
		t.Errorf("dry-run output does not name the CRDs:\n%s", out.String())
	}
	list, err := cs.ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Fatalf("dry run created %d CRDs", len(list.Items))
	}

	// Install, then install again: the second changes nothing.
	if got, err = install.CRDs(ctx, env.Hub.RESTConfig(), crds, install.Options{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(results(names, install.Created), got); diff != "" {
		t.Errorf("first install (-want +got):\n%s", diff)
	}
	for _, n := range names {
		c, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !established(c) {
			t.Errorf("CRD %s is not Established after install returned", n)
		}
	}
	before := resourceVersions(t, cs, names)
	if got, err = install.CRDs(ctx, env.Hub.RESTConfig(), crds, install.Options{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(results(names, install.Unchanged), got); diff != "" {
		t.Errorf("second install (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, resourceVersions(t, cs, names)); diff != "" {
		t.Errorf("second install wrote to the CRDs (-before +after):\n%s", diff)
	}

	// Someone changed a field Flotilla owns: dry run reports it, install puts it back.
	const drifted = "managedclusters.cluster.open-cluster-management.io"
	var one []*apiextv1.CustomResourceDefinition
	for _, c := range crds {
		if c.Name == drifted {
			one = append(one, c)
		}
	}
	c, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, drifted, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := c.Spec.Names.ShortNames
	c.Spec.Names.ShortNames = []string{"flotillatest"}
	if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, c, metav1.UpdateOptions{FieldManager: "someone-else"}); err != nil {
		t.Fatal(err)
	}
	got, err = install.CRDs(ctx, env.Hub.RESTConfig(), one, install.Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if got[drifted] != install.WouldConfigure {
		t.Errorf("dry run over a changed CRD = %q, want %q", got[drifted], install.WouldConfigure)
	}
	if got, err = install.CRDs(ctx, env.Hub.RESTConfig(), one, install.Options{}); err != nil {
		t.Fatal(err)
	}
	if got[drifted] != install.Configured {
		t.Errorf("install over a changed CRD = %q, want %q", got[drifted], install.Configured)
	}
	c, err = cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, drifted, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, c.Spec.Names.ShortNames); diff != "" {
		t.Errorf("short names after reinstall (-want +got):\n%s", diff)
	}
}

func TestInstallReportsRefusedCRD(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	bad := &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "wrongname.example.com"},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextv1.CustomResourceDefinitionNames{Kind: "Thing", Plural: "things"},
			Scope: apiextv1.NamespaceScoped,
		},
	}
	_, err := install.CRDs(context.Background(), env.Hub.RESTConfig(), []*apiextv1.CustomResourceDefinition{bad}, install.Options{})
	if err == nil || !strings.Contains(err.Error(), "applying CRD wrongname.example.com") || !strings.Contains(err.Error(), "must be spec.names.plural+\".\"+spec.group") {
		t.Errorf("installing an invalid CRD: err = %v, want one naming the CRD and the API server's reason", err)
	}
}

func established(c *apiextv1.CustomResourceDefinition) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == apiextv1.Established {
			return cond.Status == apiextv1.ConditionTrue
		}
	}
	return false
}

func resourceVersions(t *testing.T, cs apiextclient.Interface, names []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range names {
		c, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out[n] = c.ResourceVersion
	}
	return out
}
