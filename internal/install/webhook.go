package install

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/flotilla/flotilla/internal/contract/wellknown"
)

var managedClusters = schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1", Resource: "managedclusters"}

// WaitWebhook waits until the API server reaches the hub's admission webhook: the hub has written
// its webhook configuration and a dry-run create of a ManagedCluster, which the webhook reviews,
// succeeds. It says what is wrong when timeout passes first.
func WaitWebhook(ctx context.Context, cfg *rest.Config, timeout time.Duration, out io.Writer, clk clock.Clock) error {
	if clk == nil {
		clk = clock.RealClock{}
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	probe := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
		"metadata": map[string]any{"name": "flotilla-install-probe"},
		"spec":     map[string]any{"hubAcceptsClient": false},
	}}
	deadline := clk.Now().Add(timeout)
	last := ""
	for {
		state, ok := webhookState(ctx, cs, dyn, probe)
		if ok {
			return nil
		}
		if state != last && out != nil {
			_, _ = fmt.Fprintf(out, "  admission webhook: %s\n", state)
			last = state
		}
		if !clk.Now().Before(deadline) {
			return fmt.Errorf("the hub runs but its admission webhook is not usable after %s: %s", timeout, state)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-clk.After(time.Second):
		}
	}
}

func webhookState(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, probe *unstructured.Unstructured) (string, bool) {
	vwc, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, wellknown.HubWebhookConfiguration, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "the hub's leader has not written ValidatingWebhookConfiguration " + wellknown.HubWebhookConfiguration + " yet", false
	}
	if err != nil {
		return err.Error(), false
	}
	_, err = dyn.Resource(managedClusters).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	switch {
	case err == nil, apierrors.IsAlreadyExists(err):
		return "", true
	case strings.Contains(err.Error(), "failed calling webhook"):
		why := "check that network policies let the API server reach the hub's webhook port"
		if svc := webhookService(vwc); svc != nil {
			if p := serviceProblem(ctx, cs, svc.Namespace, svc.Name); p != "" {
				why = p
			}
		}
		return "the API server cannot call it (" + err.Error() + "): " + why, false
	default:
		return "a dry-run ManagedCluster create failed: " + err.Error(), false
	}
}

// webhookService is the Service the configuration's first webhook is called through, nil when it
// is called by URL.
func webhookService(vwc *admissionregistrationv1.ValidatingWebhookConfiguration) *admissionregistrationv1.ServiceReference {
	for _, w := range vwc.Webhooks {
		if w.ClientConfig.Service != nil {
			return w.ClientConfig.Service
		}
	}
	return nil
}

// serviceProblem says why Service ns/name cannot take a call: it does not exist, or no ready pod
// backs it (with its selector, so that a selector matching no pod shows). "" when it has a ready
// endpoint.
func serviceProblem(ctx context.Context, cs kubernetes.Interface, ns, name string) string {
	svc, err := cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Sprintf("Service %s/%s does not exist: install the hub chart again (flotilla init --install --upgrade)", ns, name)
	}
	if err != nil {
		return ""
	}
	slices, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
	if err != nil {
		return ""
	}
	return readyEndpoints(svc, slices.Items)
}

// readyEndpoints is serviceProblem's decision on what it read.
func readyEndpoints(svc *corev1.Service, slices []discoveryv1.EndpointSlice) string {
	for _, s := range slices {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				return ""
			}
		}
	}
	return fmt.Sprintf("Service %s/%s has no ready endpoints: no ready pod matches its selector %s (are the hub's pods ready, and do their labels match?)",
		svc.Namespace, svc.Name, labels.SelectorFromSet(svc.Spec.Selector))
}
