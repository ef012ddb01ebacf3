package crd

// Conversion by webhook. The add-on CRDs serve v1alpha1 (stored) and v1beta1, whose schemas
// differ, so the API server asks the hub to convert (strategy Webhook). `make generate` inserts
// webhook-conversion.snippet into their spec: controller-gen has no marker for it. The snippet's
// URL is a placeholder, which names no server (.invalid): the hub that leads writes its own
// address and certificate authority into spec.conversion.webhook.clientConfig, and until then
// requests at v1beta1 fail while v1alpha1 ones, which need no conversion, work.

// ConversionPlaceholderURL is the conversion webhook address the CRDs are installed with.
const ConversionPlaceholderURL = "https://flotilla-hub.invalid/convert"

// ConvertedByWebhook names the CRDs whose versions the hub's conversion webhook converts.
var ConvertedByWebhook = []string{
	"addondeploymentconfigs.addon.open-cluster-management.io",
	"clustermanagementaddons.addon.open-cluster-management.io",
	"managedclusteraddons.addon.open-cluster-management.io",
}
