//go:build integration

package governance

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla/flotilla/api/policy/v1"
	"github.com/flotilla/flotilla/internal/local/testenv"
	"github.com/flotilla/flotilla/internal/policytemplate"
)

// TestTemplates: hub templates are resolved by the hub for each cluster from the policy's own
// namespace, cluster templates by the cluster from its own objects; a hub template that reads
// another namespace is refused (the copy carries the error, the cluster reports it, the root gets
// a Warning event and the hub reads nothing there), and a cluster template that fails fails its
// policy alone.
func TestTemplates(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	ns := f.set.Namespace
	testenv.Create(t, f.hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"region": "eu-west"}})
	testenv.Create(t, f.hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "elsewhere"}, Data: map[string]string{"k": "hub-secret-ish"}})
	testenv.Create(t, f.spoke, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cluster-info"}, Data: map[string]string{"tier": "gold"}})

	templated := configPolicy(ns, "templated", "musthave", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"default","name":"templated"},
		"data":{"region":"{{hub fromConfigMap \"\" \"settings\" \"region\" hub}}","cluster":"{{hub .ManagedClusterName hub}}",
		"tier":"{{ fromConfigMap \"default\" \"cluster-info\" \"tier\" }}"}}`)
	otherNS := configPolicy(ns, "other-namespace", "musthave", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"default","name":"leak"},
		"data":{"k":"{{hub fromConfigMap \"default\" \"elsewhere\" \"k\" hub}}"}}`)
	missing := configPolicy(ns, "missing-on-cluster", "musthave", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"default","name":"m"},
		"data":{"k":"{{ fromConfigMap \"default\" \"nope\" \"k\" }}"}}`)
	for _, p := range []*policyv1.Policy{templated, otherNS, missing} {
		p.Spec.RemediationAction = "enforce"
		testenv.Create(t, f.hub, p)
	}
	f.bind(t, templated.Name, otherNS.Name, missing.Name)

	f.waitReport(t, templated, policyv1.Compliant, "configmaps [templated] was created successfully in namespace default")
	cm := &corev1.ConfigMap{}
	if err := f.spoke.Get(ctx, client.ObjectKey{Namespace: "default", Name: "templated"}, cm); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"region": "eu-west", "cluster": f.cluster, "tier": "gold"}
	if fmt.Sprint(cm.Data) != fmt.Sprint(want) {
		t.Errorf("the enforced ConfigMap's data = %v, want %v", cm.Data, want)
	}
	// The hub's copy has the hub's values and the cluster's template, not the cluster's value.
	cp := &policyv1.Policy{}
	if err := f.hub.Get(ctx, client.ObjectKey{Namespace: f.cluster, Name: ns + ".templated"}, cp); err != nil {
		t.Fatal(err)
	}
	raw := string(cp.Spec.PolicyTemplates[0].ObjectDefinition.Raw)
	if !strings.Contains(raw, "eu-west") || strings.Contains(raw, "{{hub") || !strings.Contains(raw, `fromConfigMap \"default\" \"cluster-info\"`) {
		t.Errorf("the copy's template: %s", raw)
	}

	// A hub template of another namespace: refused on the hub, reported by the cluster.
	got := f.waitReport(t, otherNS, policyv1.NonCompliant, "the namespace argument is restricted to "+ns)
	if a := string(got.Spec.PolicyTemplates[0].ObjectDefinition.Raw); !strings.Contains(a, policytemplate.ErrorAnnotation) || strings.Contains(a, "hub-secret-ish") {
		t.Errorf("the copy's template does not carry the error, or carries the other namespace's value: %s", a)
	}
	testenv.WaitFor(t, wait, "the root's event for the refused hub template", func(ctx context.Context) (bool, string, error) {
		l := &eventsv1.EventList{}
		if err := f.hub.List(ctx, l, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		for _, e := range l.Items {
			if e.Reason == "PolicyPropagation" && e.Regarding.Name == otherNS.Name && strings.Contains(e.Note, "Failed to resolve templates for cluster "+f.cluster) {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("%d events, none PolicyPropagation for %s", len(l.Items), otherNS.Name), nil
	})
	if err := f.spoke.Get(ctx, client.ObjectKey{Namespace: "default", Name: "leak"}, &corev1.ConfigMap{}); err == nil {
		t.Errorf("the policy with a refused hub template was enforced")
	}

	// A cluster template that fails fails its own policy, naming what is missing.
	f.waitReport(t, missing, policyv1.NonCompliant, "failed to get the ConfigMap nope from default")

	// The hub's value changes and the root's trigger-update annotation (OCM's) asks for the
	// templates again (without it they are resolved again within policy.HubTemplateResync): the
	// copies follow, without the annotation, and the cluster enforces the new value.
	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}}
	testenv.Update(t, f.hub, settings, func() { settings.Data["region"] = "eu-north" })
	testenv.Update(t, f.hub, templated, func() {
		templated.Annotations = map[string]string{policytemplate.TriggerUpdateAnnotation: "1"}
	})
	testenv.WaitFor(t, wait, "the spoke's ConfigMap to follow the hub's", func(ctx context.Context) (bool, string, error) {
		if err := f.spoke.Get(ctx, client.ObjectKey{Namespace: "default", Name: "templated"}, cm); err != nil {
			return false, "", err
		}
		return cm.Data["region"] == "eu-north", fmt.Sprint(cm.Data), nil
	})
	if err := f.hub.Get(ctx, client.ObjectKey{Namespace: f.cluster, Name: ns + ".templated"}, cp); err != nil {
		t.Fatal(err)
	}
	if _, ok := cp.Annotations[policytemplate.TriggerUpdateAnnotation]; ok {
		t.Errorf("the copy carries the root's trigger-update annotation: %v", cp.Annotations)
	}
}
