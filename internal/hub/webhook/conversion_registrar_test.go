package webhook

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/flotilla/flotilla/config/crd"
)

const testCRD = "managedclusteraddons.addon.open-cluster-management.io"

func crdConverting(url string, ca []byte) *apiextv1.CustomResourceDefinition {
	return &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: testCRD, ResourceVersion: "1"},
		Spec: apiextv1.CustomResourceDefinitionSpec{Conversion: &apiextv1.CustomResourceConversion{
			Strategy: apiextv1.WebhookConverter,
			Webhook: &apiextv1.WebhookConversion{
				ClientConfig:             &apiextv1.WebhookClientConfig{URL: ptr.To(url), CABundle: ca},
				ConversionReviewVersions: []string{"v1"},
			},
		}},
	}
}

func TestConversionRegistrarEnsure(t *testing.T) {
	const url = "https://127.0.0.1:9443/convert"
	want := crdConverting(url, []byte("CA")).Spec.Conversion
	cases := map[string]struct {
		existing   []runtime.Object
		wantWrites []string
		wantRV     bool
	}{
		"installed with the placeholder: patched": {
			existing: []runtime.Object{crdConverting(crd.ConversionPlaceholderURL, nil)}, wantWrites: []string{"patch"}, wantRV: true,
		},
		"another replica's: patched": {
			existing: []runtime.Object{crdConverting("https://10.0.0.1:9443/convert", []byte("old CA"))}, wantWrites: []string{"patch"}, wantRV: true,
		},
		"no conversion (an older CRD): patched": {
			existing: []runtime.Object{&apiextv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: testCRD, ResourceVersion: "1"}}}, wantWrites: []string{"patch"}, wantRV: true,
		},
		"already this replica's: left alone": {existing: []runtime.Object{crdConverting(url, []byte("CA"))}, wantRV: true},
		"missing: left for the next check":   {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cs := fake.NewClientset(tc.existing...)
			r := &conversionRegistrar{crds: cs.ApiextensionsV1().CustomResourceDefinitions(), want: apiextv1.WebhookClientConfig{URL: ptr.To(url), CABundle: []byte("CA")}}
			rv, err := r.ensure(context.Background(), testCRD, func(string, ...any) {})
			if err != nil {
				t.Fatal(err)
			}
			if (rv != "") != tc.wantRV {
				t.Errorf("resourceVersion %q, want one: %v", rv, tc.wantRV)
			}
			var writes []string
			for _, a := range cs.Actions() {
				if a.GetVerb() != "get" {
					writes = append(writes, a.GetVerb())
				}
			}
			if diff := cmp.Diff(tc.wantWrites, writes); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			if len(tc.existing) == 0 {
				return
			}
			got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), testCRD, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got.Spec.Conversion); diff != "" {
				t.Errorf("spec.conversion (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConversionRegistrarKeeps: while it runs, the registrar puts back a changed conversion
// webhook.
func TestConversionRegistrarKeeps(t *testing.T) {
	const url = "https://127.0.0.1:9443/convert"
	cs := fake.NewClientset(crdConverting(crd.ConversionPlaceholderURL, nil))
	api := cs.ApiextensionsV1().CustomResourceDefinitions()
	clk := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	r := &conversionRegistrar{crds: api, names: []string{testCRD}, want: apiextv1.WebhookClientConfig{URL: ptr.To(url), CABundle: []byte("CA")},
		started: func() error { return nil }, clock: clk, resync: DefaultResync}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start() = %v after the context ended, want nil", err)
		}
	}()
	eventually := func(what string) {
		t.Helper()
		for range 200 {
			got, err := api.Get(context.Background(), testCRD, metav1.GetOptions{})
			if err == nil && r.current(got) {
				return
			}
			clk.Step(DefaultResync)
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("%s: the conversion webhook does not name the replica", what)
	}
	eventually("at start")
	if _, err := api.Update(context.Background(), crdConverting("https://10.0.0.1:1/convert", nil), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually("after someone changed it")
}
