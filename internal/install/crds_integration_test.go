//go:build integration

package install_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/flotilla/flotilla/config/crd"
	"github.com/flotilla/flotilla/internal/certs"
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
	t.Cleanup(func() { removeCRDs(t, cs, names) })

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

// A hub running in the cluster points the add-on CRDs' conversion webhook at its Service (a merge
// patch of the client config, as internal/hub/webhook's registrar writes it). Installing the CRDs
// again, as `flotilla init` does right after installing that hub and `flotilla install crds`
// before an upgrade, keeps the hub's client config: before, the installer's forced apply put its
// placeholder url back beside the hub's service, which the API server refuses ("exactly one of
// url or service is required"), and init failed on its first real install.
func TestInstallKeepsTheHubsConversionWebhook(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx := context.Background()
	crds, err := crd.All()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := apiextclient.NewForConfig(env.Hub.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range crds {
		names = append(names, c.Name)
	}
	t.Cleanup(func() { removeCRDs(t, cs, names) })
	// The tests before this one removed the CRDs they installed and waited for them to be gone.
	if list, err := cs.ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Fatalf("the hub must start without CRDs: %d left, err %v", len(list.Items), err)
	}
	if _, err := install.CRDs(ctx, env.Hub.RESTConfig(), crds, install.Options{}); err != nil {
		t.Fatal(err)
	}
	name := crd.ConvertedByWebhook[0]
	ca, err := certs.NewCA("hub-webhook-ca", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	hubs, err := json.Marshal(map[string]any{"spec": map[string]any{"conversion": map[string]any{"webhook": map[string]any{"clientConfig": map[string]any{
		"url": nil, "caBundle": ca.CertPEM(),
		"service": map[string]any{"namespace": "open-cluster-management-hub", "name": "flotilla-hub-webhook", "path": "/convert", "port": 443},
	}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Patch(ctx, name, types.MergePatchType, hubs, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := install.CRDs(ctx, env.Hub.RESTConfig(), crds, install.Options{}); err != nil {
		t.Fatalf("installing the CRDs again over the hub's conversion webhook: %v", err)
	}
	got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cc := got.Spec.Conversion.Webhook.ClientConfig
	if cc.URL != nil || cc.Service == nil || cc.Service.Name != "flotilla-hub-webhook" || !bytes.Equal(cc.CABundle, ca.CertPEM()) {
		t.Errorf("conversion client config after reinstall: url %v, service %+v, caBundle %q; want the hub's service and CA", cc.URL, cc.Service, cc.CABundle)
	}
}

// removeCRDs deletes the named CRDs and waits until the API server has finished deleting them, so
// that the next test of the package, on the same hub, starts on a hub without them. The API
// server's CRD finalizer removes each CRD's instances first, which on a loaded machine takes more
// than a few seconds for thirty CRDs; the wait is generous and names what is left.
func removeCRDs(t *testing.T, cs apiextclient.Interface, names []string) {
	t.Helper()
	ctx := context.Background()
	for _, n := range names {
		if err := cs.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting CRD %s: %v", n, err)
		}
	}
	var left []string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		left = left[:0]
		for _, n := range names {
			_, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, n, metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				left = append(left, n)
			}
		}
		return len(left) == 0, nil
	})
	if err != nil {
		t.Errorf("CRDs still there 5 minutes after their deletion: %v", left)
	}
}
