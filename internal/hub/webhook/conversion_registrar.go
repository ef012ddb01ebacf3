package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// conversionRegistrar keeps the conversion webhook of the add-on CRDs (crd.ConvertedByWebhook)
// naming this replica while it leads, as registrar keeps the admission webhook configuration:
// it writes the address and authority into each CRD's spec.conversion.webhook.clientConfig once
// the server answers, and puts them back whenever they change (a watch per CRD, and a check every
// resync period). A CRD that is missing is checked again at the next period; it does not stop
// the hub, which serves the v1alpha1 add-on API without conversion.
type conversionRegistrar struct {
	crds    apiextclient.CustomResourceDefinitionInterface
	names   []string
	want    apiextv1.WebhookClientConfig
	started func() error
	clock   clock.WithTicker
	resync  time.Duration
}

var (
	_ manager.Runnable               = (*conversionRegistrar)(nil)
	_ manager.LeaderElectionRunnable = (*conversionRegistrar)(nil)
)

// NeedLeaderElection is true: the API server calls one address, the leader's.
func (r *conversionRegistrar) NeedLeaderElection() bool { return true }

// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,resourceNames=addondeploymentconfigs.addon.open-cluster-management.io;clustermanagementaddons.addon.open-cluster-management.io;managedclusteraddons.addon.open-cluster-management.io,verbs=get;list;watch;patch

// Start keeps every CRD's conversion webhook until ctx ends.
func (r *conversionRegistrar) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("conversion-registrar")
	err := retry.OnError(registerBackoff, func(error) bool { return ctx.Err() == nil }, r.started)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("the webhook server did not start, so the CRDs' conversion webhook cannot name it: %w", err)
	}
	var wg sync.WaitGroup
	for _, name := range r.names {
		wg.Go(func() { r.keep(ctx, name, log.Info, log.Error) })
	}
	wg.Wait()
	return nil
}

// keep ensures one CRD until ctx ends.
func (r *conversionRegistrar) keep(ctx context.Context, name string, info func(string, ...any), fail func(error, string, ...any)) {
	tick := r.clock.NewTicker(r.resync)
	defer tick.Stop()
	for {
		rv, err := r.ensure(ctx, name, info)
		if err != nil && ctx.Err() == nil {
			fail(err, "keeping the conversion webhook of a CRD", "crd", name)
		}
		if r.wait(ctx, name, rv, tick.C()) != nil {
			return
		}
	}
}

// wait returns when the CRD may have changed since resourceVersion rv (see registrar.wait).
func (r *conversionRegistrar) wait(ctx context.Context, name, rv string, tick <-chan time.Time) error {
	return waitForChange(ctx, r.clock, r.crds.Watch, name, rv, tick)
}

// ensure makes the CRD's conversion webhook name this replica, and returns the CRD's
// resourceVersion ("" when the CRD does not exist). It writes only when something differs.
func (r *conversionRegistrar) ensure(ctx context.Context, name string, info func(string, ...any)) (string, error) {
	got, err := r.crds.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if r.current(got) {
		return got.ResourceVersion, nil
	}
	patch, err := r.patch()
	if err != nil {
		return "", err
	}
	updated, err := r.crds.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return "", err
	}
	info("wrote the conversion webhook of a CRD", "crd", name, "to", describeConversion(&r.want), "previous", conversionTarget(got))
	return updated.ResourceVersion, nil
}

// current says whether crd's conversion is this replica's webhook.
func (r *conversionRegistrar) current(crd *apiextv1.CustomResourceDefinition) bool {
	c := crd.Spec.Conversion
	if c == nil || c.Strategy != apiextv1.WebhookConverter || c.Webhook == nil || c.Webhook.ClientConfig == nil {
		return false
	}
	return equality.Semantic.DeepEqual(*c.Webhook.ClientConfig, r.want) &&
		len(c.Webhook.ConversionReviewVersions) == 1 && c.Webhook.ConversionReviewVersions[0] == "v1"
}

// patch is the merge patch that makes a CRD's conversion this replica's webhook.
func (r *conversionRegistrar) patch() ([]byte, error) {
	clientConfig := map[string]any{"url": nil, "service": nil, "caBundle": nil}
	if r.want.URL != nil {
		clientConfig["url"] = *r.want.URL
	}
	if s := r.want.Service; s != nil {
		clientConfig["service"] = s
	}
	if len(r.want.CABundle) > 0 {
		clientConfig["caBundle"] = r.want.CABundle // []byte: base64, as the API expects
	}
	return json.Marshal(map[string]any{"spec": map[string]any{"conversion": map[string]any{
		"strategy": apiextv1.WebhookConverter,
		"webhook": map[string]any{
			"clientConfig":             clientConfig,
			"conversionReviewVersions": []string{"v1"},
		},
	}}})
}

func conversionTarget(crd *apiextv1.CustomResourceDefinition) string {
	if c := crd.Spec.Conversion; c != nil && c.Webhook != nil {
		return describeConversion(c.Webhook.ClientConfig)
	}
	return "none"
}

func describeConversion(c *apiextv1.WebhookClientConfig) string {
	switch {
	case c == nil:
		return "none"
	case c.Service != nil:
		return fmt.Sprintf("service %s/%s:%d%s", c.Service.Namespace, c.Service.Name, ptr.Deref(c.Service.Port, 443), ptr.Deref(c.Service.Path, ""))
	case c.URL != nil:
		return *c.URL
	}
	return "none"
}
