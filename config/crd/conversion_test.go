package crd

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

// TestConversion: the add-on CRDs serve v1alpha1 (stored) and v1beta1 as the reference does, and
// the API server converts them through the hub's webhook; every other CRD stores the version it
// serves, or converts without a webhook.
func TestConversion(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]*apiextv1.CustomResourceDefinition{}
	for _, r := range referenceCRDs(t) {
		refs[r.Name] = r
	}
	wantWebhook := &apiextv1.CustomResourceConversion{
		Strategy: apiextv1.WebhookConverter,
		Webhook: &apiextv1.WebhookConversion{
			ClientConfig:             &apiextv1.WebhookClientConfig{URL: ptr.To(ConversionPlaceholderURL)},
			ConversionReviewVersions: []string{"v1"},
		},
	}
	seen := 0
	for _, c := range all {
		t.Run(c.Name, func(t *testing.T) {
			if !slices.Contains(ConvertedByWebhook, c.Name) {
				if c.Spec.Conversion != nil && c.Spec.Conversion.Strategy == apiextv1.WebhookConverter {
					t.Errorf("converts by webhook, but is not in ConvertedByWebhook")
				}
				return
			}
			seen++
			if diff := cmp.Diff(wantWebhook, c.Spec.Conversion); diff != "" {
				t.Errorf("spec.conversion (-want +got):\n%s", diff)
			}
			ref, ok := refs[c.Name]
			if !ok {
				t.Fatalf("no reference CRD %s", c.Name)
			}
			if diff := cmp.Diff(versions(ref), versions(c)); diff != "" {
				t.Errorf("served and stored versions (-reference +ours):\n%s", diff)
			}
		})
	}
	if seen != len(ConvertedByWebhook) {
		t.Errorf("found %d of the CRDs in ConvertedByWebhook %v", seen, ConvertedByWebhook)
	}
}

// versions lists a CRD's versions as "name served=… storage=…".
func versions(c *apiextv1.CustomResourceDefinition) []string {
	var out []string
	for _, v := range c.Spec.Versions {
		s := v.Name
		if v.Served {
			s += " served"
		}
		if v.Storage {
			s += " stored"
		}
		out = append(out, s)
	}
	return out
}
