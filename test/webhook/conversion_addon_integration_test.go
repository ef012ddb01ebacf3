//go:build integration

package webhook

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/api/addon/v1beta1"
	"github.com/flotilla/flotilla/config/crd"
	"github.com/flotilla/flotilla/internal/hub/addonconversion"
	"github.com/flotilla/flotilla/internal/local/testenv"
)

// TestConversionThroughAPIServer: the API server converts the add-on kinds through the hub's
// conversion webhook, and nothing is lost either way. Every example (examples/api, v1alpha1, and
// internal/hub/addonconversion/testdata, v1beta1) is written at its version, read at the other (the
// result is what addonconversion says), written back at the other version unchanged, and read at
// its own version again: equal to what was first read, generation included (a spec that lost
// anything on the way would have been a change).
func TestConversionThroughAPIServer(t *testing.T) {
	env := testenv.Start(t, testenv.Options{CRDs: true})
	startHub(t, env)
	c := admin(t, env)
	ns := env.Namespace(t, env.Hub)
	waitForConversion(t, env, c, ns)

	for _, path := range []string{"../../examples/api/clustermanagementaddon.yaml", "../../examples/api/managedclusteraddon.yaml",
		"../../examples/api/addondeploymentconfig.yaml", "../../internal/hub/addonconversion/testdata/v1beta1.yaml"} {
		for _, doc := range yamlDocs(t, path) {
			var h struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			}
			if err := json.Unmarshal(doc, &h); err != nil {
				t.Fatal(err)
			}
			t.Run(h.Kind+"@"+h.APIVersion, func(t *testing.T) {
				switch h.APIVersion + " " + h.Kind {
				case addonconversion.V1alpha1 + " ClusterManagementAddOn":
					throughOther(t, c, ns, doc, true, newT[v1alpha1.ClusterManagementAddOn], newT[v1beta1.ClusterManagementAddOn], addonconversion.ClusterManagementAddOnToV1beta1)
				case addonconversion.V1beta1 + " ClusterManagementAddOn":
					throughOther(t, c, ns, doc, true, newT[v1beta1.ClusterManagementAddOn], newT[v1alpha1.ClusterManagementAddOn], addonconversion.ClusterManagementAddOnToV1alpha1)
				case addonconversion.V1alpha1 + " ManagedClusterAddOn":
					throughOther(t, c, ns, doc, true, newT[v1alpha1.ManagedClusterAddOn], newT[v1beta1.ManagedClusterAddOn], addonconversion.ManagedClusterAddOnToV1beta1)
				case addonconversion.V1beta1 + " ManagedClusterAddOn":
					throughOther(t, c, ns, doc, true, newT[v1beta1.ManagedClusterAddOn], newT[v1alpha1.ManagedClusterAddOn], addonconversion.ManagedClusterAddOnToV1alpha1)
				case addonconversion.V1alpha1 + " AddOnDeploymentConfig":
					throughOther(t, c, ns, doc, false, newT[v1alpha1.AddOnDeploymentConfig], newT[v1beta1.AddOnDeploymentConfig], addonconversion.AddOnDeploymentConfigToV1beta1)
				case addonconversion.V1beta1 + " AddOnDeploymentConfig":
					throughOther(t, c, ns, doc, false, newT[v1beta1.AddOnDeploymentConfig], newT[v1alpha1.AddOnDeploymentConfig], addonconversion.AddOnDeploymentConfigToV1alpha1)
				default:
					t.Fatalf("%s: unexpected %s %s", path, h.APIVersion, h.Kind)
				}
			})
		}
	}
}

func newT[T any]() *T { return new(T) }

// throughOther writes doc (an object of type A) in ns, reads it as B and checks it against
// convert, writes B back, and checks that A reads back unchanged.
func throughOther[A, B any, PA interface {
	*A
	client.Object
}, PB interface {
	*B
	client.Object
}](t *testing.T, c client.Client, ns string, doc []byte, hasStatus bool, newA func() PA, newB func() PB, convert func(PA) (PB, error)) {
	ctx := context.Background()
	obj := newA()
	if err := json.Unmarshal(doc, obj); err != nil {
		t.Fatal(err)
	}
	obj.SetName(obj.GetName() + "-" + obj.GetObjectKind().GroupVersionKind().Version)
	if obj.GetObjectKind().GroupVersionKind().Kind != "ClusterManagementAddOn" {
		obj.SetNamespace(ns)
	}
	if err := c.Create(ctx, obj); err != nil {
		t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
	deleteAtEnd(t, c, obj)
	if hasStatus {
		var whole map[string]json.RawMessage
		if err := json.Unmarshal(doc, &whole); err != nil {
			t.Fatal(err)
		}
		patch, _ := json.Marshal(map[string]json.RawMessage{"status": whole["status"]})
		if err := c.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatalf("writing the status of %s: %v", obj.GetName(), err)
		}
	}
	key := client.ObjectKeyFromObject(obj)
	// The client leaves out the apiVersion and kind of what it reads.
	typeMeta := cmpopts.IgnoreTypes(metav1.TypeMeta{})
	ignore := cmp.Options{typeMeta, cmpopts.IgnoreFields(metav1.ObjectMeta{}, "ResourceVersion", "ManagedFields")}

	// Read at both versions, of the same resourceVersion, once the object has settled: the hub's
	// add-on controllers write their conditions into a ManagedClusterAddOn's status once.
	var first PA
	var other PB
	lastRV := ""
	testenv.WaitFor(t, wait, "reading "+key.String()+" at both versions, settled", func(ctx context.Context) (bool, string, error) {
		first, other = newA(), newB()
		if err := c.Get(ctx, key, first); err != nil {
			return false, err.Error(), nil
		}
		if err := c.Get(ctx, key, other); err != nil {
			return false, err.Error(), nil
		}
		settled := first.GetResourceVersion() == lastRV
		lastRV = first.GetResourceVersion()
		if !settled {
			time.Sleep(time.Second)
		}
		return settled && first.GetResourceVersion() == other.GetResourceVersion(), "the object changed between the reads", nil
	})
	want, err := convert(first)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, other, typeMeta); diff != "" {
		t.Errorf("read at the other version (-converted here +converted by the API server through the hub):\n%s", diff)
	}

	// Write the other version back unchanged, spec and status: the object stays as it was.
	if err := c.Update(ctx, other); err != nil {
		t.Fatalf("writing %s back at the other version: %v", key, err)
	}
	if hasStatus {
		if err := c.Status().Update(ctx, other); err != nil {
			t.Fatalf("writing the status of %s back at the other version: %v", key, err)
		}
	}
	again := newA()
	if err := c.Get(ctx, key, again); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, again, ignore); diff != "" {
		t.Errorf("after a round trip through the other version (-before +after):\n%s", diff)
	}
}

// waitForConversion returns once the leader has written its address into the add-on CRDs and the
// API server converts through it.
func waitForConversion(t *testing.T, env *testenv.Env, c client.Client, ns string) {
	t.Helper()
	crds, err := apiextclient.NewForConfig(env.Hub.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, wait, "the hub to name itself in the add-on CRDs' conversion webhook", func(ctx context.Context) (bool, string, error) {
		for _, name := range crd.ConvertedByWebhook {
			got, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			if u := conversionURLOf(got); u == "" || u == crd.ConversionPlaceholderURL {
				return false, fmt.Sprintf("%s converts through %q", name, u), nil
			}
		}
		return true, "", nil
	})
	probe := &v1alpha1.AddOnDeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "conversion-probe"}}
	if err := c.Create(context.Background(), probe); err != nil {
		t.Fatal(err)
	}
	deleteAtEnd(t, c, probe)
	testenv.WaitFor(t, wait, "the API server to convert through the hub", func(ctx context.Context) (bool, string, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(probe), &v1beta1.AddOnDeploymentConfig{})
		return err == nil, fmt.Sprintf("reading at v1beta1: %v", err), nil
	})
}

func conversionURLOf(c *apiextv1.CustomResourceDefinition) string {
	if cv := c.Spec.Conversion; cv != nil && cv.Webhook != nil && cv.Webhook.ClientConfig != nil && cv.Webhook.ClientConfig.URL != nil {
		return *cv.Webhook.ClientConfig.URL
	}
	return ""
}

// yamlDocs are the objects of a YAML file, as JSON.
func yamlDocs(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(bytes.TrimSpace(j)) > 0 && string(j) != "null" {
			out = append(out, j)
		}
	}
}
