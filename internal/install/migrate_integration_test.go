//go:build integration

package install_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/flotilla/flotilla/internal/install"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// widgets is a CRD served in v1 and v2 (the same schema, conversion None) with storage in
// storage.
func widgets(storage string) *apiextv1.CustomResourceDefinition {
	schema := &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
		Type: "object", XPreserveUnknownFields: ptr.To(true),
	}}
	return &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.migrate.flotilla.io"},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: "migrate.flotilla.io",
			Names: apiextv1.CustomResourceDefinitionNames{Kind: "Widget", Plural: "widgets", ListKind: "WidgetList", Singular: "widget"},
			Scope: apiextv1.NamespaceScoped,
			Versions: []apiextv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: storage == "v1", Schema: schema},
				{Name: "v2", Served: true, Storage: storage == "v2", Schema: schema},
			},
		},
	}
}

// An upgrade that changes a CRD's storage version rewrites its objects and leaves
// storedVersions with the new version alone (as the add-on API's move from v1alpha1 to v1beta1
// storage would need).
func TestInstallMigratesStorageVersion(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx := context.Background()
	cfg := env.Hub.RESTConfig()
	if _, err := install.CRDs(ctx, cfg, []*apiextv1.CustomResourceDefinition{widgets("v1")}, install.Options{}); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ri := dyn.Resource(schema.GroupVersionResource{Group: "migrate.flotilla.io", Version: "v1", Resource: "widgets"}).Namespace("default")
	before := map[string]string{}
	for i := range 3 {
		w := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "migrate.flotilla.io/v1", "kind": "Widget",
			"metadata": map[string]any{"name": fmt.Sprintf("w%d", i)}, "spec": map[string]any{"size": int64(i)},
		}}
		got, err := ri.Create(ctx, w, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		before[got.GetName()] = got.GetResourceVersion()
	}
	t.Cleanup(func() {
		cs, _ := apiextclient.NewForConfig(cfg)
		_ = cs.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), "widgets.migrate.flotilla.io", metav1.DeleteOptions{})
	})

	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := install.CRDs(ctx, cfg, []*apiextv1.CustomResourceDefinition{widgets("v2")}, install.Options{}); err != nil {
		t.Fatal(err)
	}
	cs, err := apiextclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	crd, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "widgets.migrate.flotilla.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"v2"}, crd.Status.StoredVersions); diff != "" {
		t.Errorf("storedVersions after the upgrade (-want +got):\n%s", diff)
	}
	for name, rv := range before {
		got, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetResourceVersion() == rv {
			t.Errorf("widget %s was not written again (resourceVersion %s): it may still be stored in v1", name, rv)
		}
		if size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); fmt.Sprintf("w%d", size) != name {
			t.Errorf("widget %s lost its spec: %v", name, got.Object["spec"])
		}
	}
	// Applying again changes nothing more.
	n, err := install.MigrateStorage(ctx, cfg, "widgets.migrate.flotilla.io")
	if err != nil || n != 0 {
		t.Errorf("a second migration rewrote %d objects (err %v), want none", n, err)
	}
}
