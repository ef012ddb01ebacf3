package flower

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	"github.com/flotilla/flotilla/api/scheme"
	"github.com/flotilla/flotilla/internal/contract/builtinaddon"
	"github.com/flotilla/flotilla/internal/hub/builtins"
)

func key(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

// TestReconcile: what the hub keeps in flower-system, by whether the add-on is the hub's and
// enabled somewhere, and what it leaves alone.
func TestReconcile(t *testing.T) {
	ours := builtins.Desired(builtinaddon.FlowerAddon)
	theirsCMA := ours.DeepCopy()
	theirsCMA.Labels = nil
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: AddonName}}
	theirSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: CASecret}, Data: map[string][]byte{"x": []byte("y")}}
	theirService := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: SuperLinkName}}
	ourDeploy := superLinkDeployment(Options{}, "")
	ourService := superLinkService()
	caSecret, err := newCASecret(testNow)
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]client.Object{
		"Secret " + CASecret: &corev1.Secret{}, "Secret " + ServingSecret: &corev1.Secret{}, "ConfigMap " + CAConfigMap: &corev1.ConfigMap{},
		"Deployment " + SuperLinkName: &appsv1.Deployment{}, "Service " + SuperLinkName: &corev1.Service{},
		"AddOnDeploymentConfig " + builtinaddon.FlowerDeploymentConfig: &addonv1alpha1.AddOnDeploymentConfig{},
		"AddOnTemplate " + builtinaddon.FlowerTemplate:                 &addonv1alpha1.AddOnTemplate{},
	}
	cases := map[string]struct {
		existing []client.Object
		// wantOurs are the objects of all that exist afterwards with the hub's label, wantTheirs
		// those without it.
		wantOurs, wantTheirs []string
		wantCondition        string // "Status/Reason: message prefix", "" for none
	}{
		"enabled: everything made": {
			existing: []client.Object{ours.DeepCopy(), mca.DeepCopy()},
			wantOurs: []string{"AddOnDeploymentConfig flower-addon", "AddOnTemplate flower-addon", "ConfigMap flower-ca", "Deployment superlink",
				"Secret flower-ca", "Secret superlink-tls", "Service superlink"},
			wantCondition: "False/SuperLinkUnavailable: Deployment flower-system/superlink has no available replica yet",
		},
		"someone else's CA Secret: left, reported, no SuperLink": {
			existing:   []client.Object{ours.DeepCopy(), mca.DeepCopy(), theirSecret.DeepCopy()},
			wantTheirs: []string{"Secret flower-ca"},
			wantCondition: "False/SuperLinkConflict: Secret flower-system/flower-ca exists and is not Flotilla's (no label addon.flotilla.io/built-in=flower-addon): " +
				"the hub leaves it alone; delete or rename it so that the hub can make its own",
		},
		"someone else's Service: left, reported": {
			existing: []client.Object{ours.DeepCopy(), mca.DeepCopy(), theirService.DeepCopy()},
			wantOurs: []string{"AddOnDeploymentConfig flower-addon", "AddOnTemplate flower-addon", "ConfigMap flower-ca",
				"Secret flower-ca", "Secret superlink-tls"},
			wantTheirs:    []string{"Service superlink"},
			wantCondition: "False/SuperLinkConflict: Service flower-system/superlink exists and is not Flotilla's",
		},
		"enabled nowhere: the SuperLink goes, the CA stays": {
			existing: []client.Object{ours.DeepCopy(), caSecret.DeepCopy(), ourDeploy.DeepCopy(), ourService.DeepCopy()},
			wantOurs: []string{"Secret flower-ca"},
		},
		"enabled nowhere: someone else's Service stays": {
			existing:   []client.Object{ours.DeepCopy(), theirService.DeepCopy(), ourDeploy.DeepCopy()},
			wantTheirs: []string{"Service superlink"},
		},
		"the ClusterManagementAddOn is someone else's: nothing": {
			existing: []client.Object{theirsCMA.DeepCopy(), mca.DeepCopy()},
		},
		"no ClusterManagementAddOn: the SuperLink goes": {
			existing: []client.Object{mca.DeepCopy(), ourDeploy.DeepCopy(), ourService.DeepCopy()},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(tc.existing...).
				WithStatusSubresource(&addonv1alpha1.ManagedClusterAddOn{}).Build()
			r := &Reconciler{Client: c, Reader: c, Clock: clocktesting.NewFakePassiveClock(testNow), Options: Options{}.withDefaults()}
			if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key("", AddonName)}); err != nil {
				t.Fatal(err)
			}
			var gotOurs, gotTheirs []string
			for what, o := range all {
				name := strings.Fields(what)[1]
				ns := Namespace
				if strings.HasPrefix(what, "AddOnTemplate") {
					ns = ""
				}
				err := c.Get(ctx, key(ns, name), o)
				if apierrors.IsNotFound(err) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if owned(o.GetLabels()) {
					gotOurs = append(gotOurs, what)
				} else {
					gotTheirs = append(gotTheirs, what)
				}
			}
			slices.Sort(gotOurs)
			slices.Sort(gotTheirs)
			if diff := cmp.Diff(tc.wantOurs, gotOurs); diff != "" {
				t.Errorf("the hub's objects (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantTheirs, gotTheirs); diff != "" {
				t.Errorf("others' objects (-want +got):\n%s", diff)
			}
			if s := (&corev1.Secret{}); c.Get(ctx, key(Namespace, CASecret), s) == nil && !owned(s.Labels) && string(s.Data["x"]) != "y" {
				t.Errorf("someone else's Secret was changed: %v", s.Data)
			}
			got := ""
			m := &addonv1alpha1.ManagedClusterAddOn{}
			if err := c.Get(ctx, key("c1", AddonName), m); err == nil {
				if cond := meta.FindStatusCondition(m.Status.Conditions, ConditionSuperLink); cond != nil {
					got = string(cond.Status) + "/" + cond.Reason + ": " + cond.Message
				}
			}
			if !strings.HasPrefix(got, tc.wantCondition) || (tc.wantCondition == "") != (got == "") {
				t.Errorf("condition %q, want %q", got, tc.wantCondition)
			}
			tmpl := &addonv1alpha1.AddOnTemplate{}
			if c.Get(ctx, key("", builtinaddon.FlowerTemplate), tmpl) == nil {
				raw, _ := json.Marshal(tmpl)
				if strings.Contains(string(raw), "PRIVATE KEY") {
					t.Errorf("the AddOnTemplate holds a private key")
				}
			}
		})
	}
}

// TestCondition: SuperLinkReady from what sync found.
func TestCondition(t *testing.T) {
	avail := &appsv1.Deployment{Status: appsv1.DeploymentStatus{AvailableReplicas: 1}}
	forbidden := apierrors.NewForbidden(corev1.Resource("secrets"), CASecret, errors.New("no rule allows it"))
	cases := map[string]struct {
		opts   Options
		deploy *appsv1.Deployment
		err    error
		want   metav1.Condition
	}{
		"available, TLS": {deploy: avail, want: metav1.Condition{Type: ConditionSuperLink, Status: metav1.ConditionTrue, Reason: ReasonAvailable,
			Message: "SuperLink flower-system/superlink is available; the clusters reach its Fleet API at superlink.flower-system.svc:9092 with TLS (CA certificate in ConfigMap flower-system/flower-ca)"}},
		"available, insecure, IPv6": {opts: Options{Insecure: true, Address: "[2001:db8::1]:30092"}, deploy: avail,
			want: metav1.Condition{Type: ConditionSuperLink, Status: metav1.ConditionTrue, Reason: ReasonAvailable,
				Message: "SuperLink flower-system/superlink is available; the clusters reach its Fleet API at [2001:db8::1]:30092 without TLS"}},
		"not yet": {deploy: &appsv1.Deployment{}, want: metav1.Condition{Type: ConditionSuperLink, Status: metav1.ConditionFalse, Reason: ReasonUnavailable,
			Message: "Deployment flower-system/superlink has no available replica yet"}},
		"forbidden: the Role to grant": {err: &wrapped{"reading Secret flower-system/flower-ca", forbidden},
			want: metav1.Condition{Type: ConditionSuperLink, Status: metav1.ConditionFalse, Reason: ReasonFailed,
				Message: `reading Secret flower-system/flower-ca: secrets "flower-ca" is forbidden: no rule allows it; grant the hub's identity the Role flotilla-hub in flower-system ` +
					"(config/rbac/role.yaml; the hub chart makes it with flowerAddon.enabled=true)"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, condition(tc.opts.withDefaults(), tc.deploy, tc.err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

type wrapped struct {
	what string
	err  error
}

func (w *wrapped) Error() string { return w.what + ": " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }
