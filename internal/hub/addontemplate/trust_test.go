package addontemplate

import (
	"context"
	"crypto/x509/pkix"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	addonv1alpha1 "github.com/flotilla/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla/flotilla/api/cluster/v1beta1"
	"github.com/flotilla/flotilla/api/scheme"
	workv1 "github.com/flotilla/flotilla/api/work/v1"
	"github.com/flotilla/flotilla/internal/contract/clusteridentity"
)

var templatesGR = addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: "addontemplates"}

// managingAddOn is ClusterManagementAddOn name whose default AddOnTemplate is tmpl.
func managingAddOn(name, tmpl string) *addonv1alpha1.ClusterManagementAddOn {
	return &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{SupportedConfigs: []addonv1alpha1.ConfigMeta{{
			ConfigGroupResource: templatesGR, DefaultConfig: &addonv1alpha1.ConfigReferent{Name: tmpl}}}}}
}

const trustSigner = "example.com/gpu"

// trustTemplate is AddOnTemplate name for add-on addon: a ConfigMap, the custom signer
// trustSigner and a CurrentCluster binding of ClusterRole role.
func trustTemplate(name, addon, role string) *addonv1alpha1.AddOnTemplate {
	t := templateOf([]addonv1alpha1.RegistrationSpec{{Type: addonv1alpha1.RegistrationTypeCustomSigner,
		CustomSigner: &addonv1alpha1.CustomSignerRegistrationConfig{SignerName: trustSigner,
			SigningCA: addonv1alpha1.SigningCARef{Namespace: "gpu-system", Name: "gpu-ca"}}}},
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"agent-config","namespace":"open-cluster-management-agent-addon"},"data":{"k":"v"}}`)
	t.Name, t.Spec.AddonName = name, addon
	t.Spec.Registration = append(t.Spec.Registration, addonv1alpha1.RegistrationSpec{Type: addonv1alpha1.RegistrationTypeKubeClient,
		KubeClient: &addonv1alpha1.KubeClientRegistrationConfig{HubPermissions: []addonv1alpha1.HubPermissionConfig{{
			Type: addonv1alpha1.HubPermissionsBindingCurrentCluster, CurrentCluster: &addonv1alpha1.CurrentClusterBindingConfig{ClusterRoleName: role}}}}})
	return t
}

// trustCase is a hub where spoke-1's add-on gpu has status.configReferences naming Status.
type trustCase struct {
	CMA *addonv1alpha1.ClusterManagementAddOn
	// Decided are the clusters Placement default/all selects.
	Decided []string
	Status  string
}

// placementAddOn is ClusterManagementAddOn gpu installed by Placement default/all with AddOnTemplate
// desired, after a rollout that applied lastApplied to that placement's clusters.
func placementAddOn(desired, lastApplied string) *addonv1alpha1.ClusterManagementAddOn {
	cma := managingAddOn("gpu", "gpu-tmpl")
	ref := addonv1alpha1.PlacementRef{Namespace: "default", Name: "all"}
	cma.Spec.InstallStrategy = addonv1alpha1.InstallStrategy{Type: addonv1alpha1.InstallStrategyPlacements, Placements: []addonv1alpha1.PlacementStrategy{{
		PlacementRef: ref, Configs: []addonv1alpha1.AddOnConfig{{ConfigGroupResource: templatesGR, ConfigReferent: addonv1alpha1.ConfigReferent{Name: desired}}}}}}
	cma.Status.InstallProgressions = []addonv1alpha1.InstallProgression{{PlacementRef: ref, ConfigReferences: []addonv1alpha1.InstallConfigReference{{
		ConfigGroupResource: templatesGR,
		DesiredConfig:       &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Name: desired}, SpecHash: "h2"},
		LastAppliedConfig:   &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Name: lastApplied}, SpecHash: "h1"},
	}}}}
	return cma
}

// trustCases: the hub's own choices are used; a template an agent names in its add-on's status,
// and the hub did not choose for that cluster's add-on or that is another add-on's, is not.
var trustCases = map[string]trustCase{
	"the default template":                       {CMA: managingAddOn("gpu", "gpu-tmpl"), Status: "gpu-tmpl"},
	"forged: another template of the add-on":     {CMA: managingAddOn("gpu", "gpu-tmpl"), Status: "wide-tmpl"},
	"forged: another add-on's template":          {CMA: managingAddOn("gpu", "gpu-tmpl"), Status: "other-tmpl"},
	"named by the add-on, for another add-on":    {CMA: managingAddOn("gpu", "other-tmpl"), Status: "other-tmpl"},
	"no ClusterManagementAddOn":                  {Status: "gpu-tmpl"},
	"rollout: the placement's desired":           {CMA: placementAddOn("gpu-tmpl", "wide-tmpl"), Decided: []string{"spoke-1"}, Status: "gpu-tmpl"},
	"rollout: last applied to its placement":     {CMA: placementAddOn("gpu-tmpl", "wide-tmpl"), Decided: []string{"spoke-1"}, Status: "wide-tmpl"},
	"last applied to a placement not serving it": {CMA: placementAddOn("gpu-tmpl", "wide-tmpl"), Decided: []string{"spoke-2"}, Status: "wide-tmpl"},
}

// objects are the hub's objects for tc.
func (tc trustCase) objects() []client.Object {
	objs := []client.Object{
		trustTemplate("gpu-tmpl", "gpu", "gpu-reader"), trustTemplate("wide-tmpl", "gpu", "gpu-admin"), trustTemplate("other-tmpl", "other", "other-role"),
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "gpu-reader"}}, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "gpu-admin"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "other-role"}},
		&clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "all"}},
		&clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "all-decision-1",
			Labels: map[string]string{clusterv1beta1.PlacementLabel: "all", clusterv1beta1.DecisionGroupIndexLabel: "0"}}},
	}
	// Both spokes are accepted: the hub delivers to them (internal/hub/delivery).
	for _, c := range []string{"spoke-1", "spoke-2"} {
		objs = append(objs, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}},
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c}})
	}
	if tc.CMA != nil {
		objs = append(objs, tc.CMA.DeepCopy())
	}
	return objs
}

// decisions writes tc's decisions (status) into the fake client's PlacementDecision.
func (tc trustCase) decisions(t *testing.T, c client.Client) {
	t.Helper()
	d := &clusterv1beta1.PlacementDecision{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "all-decision-1"}, d); err != nil {
		t.Fatal(err)
	}
	for _, n := range tc.Decided {
		d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: n})
	}
	if err := c.Status().Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// forgedAddOn is spoke-1's add-on gpu, Configured, whose status.configReferences (which its agent
// may write) name AddOnTemplate tmpl.
func forgedAddOn(tmpl string) *addonv1alpha1.ManagedClusterAddOn {
	return &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "spoke-1", Name: "gpu", UID: "mca-uid"},
		Status: addonv1alpha1.ManagedClusterAddOnStatus{
			ConfigReferences: []addonv1alpha1.ConfigReference{{ConfigGroupResource: templatesGR,
				DesiredConfig: &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Name: tmpl}, SpecHash: "h1"}}},
			Conditions: []metav1.Condition{{Type: addonv1alpha1.ManagedClusterAddOnConditionConfigured, Status: metav1.ConditionTrue,
				Reason: "ConfigurationsConfigured", LastTransitionTime: metav1.Now()}}}}
}

// TestSignerUsesOnlyAllowedTemplates: the signer signs spoke-1's request only by a template the
// hub chose for spoke-1's add-on and made for it, whatever the add-on's status names.
func TestSignerUsesOnlyAllowedTemplates(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	caPEM, caKeyPEM := testCA(t, now)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "gpu-system", Name: "gpu-ca"},
		Data: map[string][]byte{corev1.TLSCertKey: caPEM, corev1.TLSPrivateKeyKey: caKeyPEM}}
	subject := Registrations("spoke-1", "gpu", trustTemplate("gpu-tmpl", "gpu", "r"))[0].Subject
	want := map[string]bool{
		"the default template": true, "rollout: the placement's desired": true, "rollout: last applied to its placement": true,
	}
	got := map[string]bool{}
	for name, tc := range trustCases {
		csr := &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: "req", Labels: map[string]string{clusteridentity.ClusterNameLabel: "spoke-1", clusteridentity.AddOnNameLabel: "gpu"}},
			Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: trustSigner,
				Username: clusteridentity.User("spoke-1", "agent-1"), Groups: clusteridentity.Groups("spoke-1"),
				Usages:  []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
				Request: requestPEM(t, pkix.Name{CommonName: subject.User, Organization: subject.Groups})}}
		c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(append(tc.objects(), forgedAddOn(tc.Status), csr)...).
			WithStatusSubresource(&clusterv1beta1.PlacementDecision{}).Build()
		tc.decisions(t, c)
		certs := kubefake.NewClientset(csr.DeepCopy())
		s := &SignerReconciler{Client: c, Reader: fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(secret).Build(),
			Certificates: certs, Clock: clocktesting.NewFakePassiveClock(now)}
		if _, err := s.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: "req"}}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, err := certs.CertificatesV1().CertificateSigningRequests().Get(context.Background(), "req", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Status.Certificate) > 0 {
			got[name] = true
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("signed (-want +got):\n%s", diff)
	}
}

// TestReconcileUsesOnlyAllowedTemplates: the template controller renders and binds only a
// template the hub chose for the add-on of that cluster and made for it; otherwise it writes
// nothing and says why in ManifestApplied.
func TestReconcileUsesOnlyAllowedTemplates(t *testing.T) {
	type outcome struct {
		// Template is the template label of the add-on's work, "" without a work.
		Template string
		// Roles are the roles bound for the add-on.
		Roles []string
		// Refused is ManifestApplied's message when its reason is ConfigurationNotAllowed.
		Refused string
	}
	notAllowed := "ManagedClusterAddOn spoke-1/gpu: status.configReferences[0].desiredConfig names addontemplates.addon.open-cluster-management.io %s, which %s; " +
		"the hub does not use a configuration it did not choose (agents may write status): name the configuration in the ClusterManagementAddOn " +
		"(spec.supportedConfigs[].defaultConfig, spec.installStrategy.placements[].configs) or in the ManagedClusterAddOn's spec.configs, " +
		"and the hub rewrites status.configReferences as the rollout reaches the cluster"
	byDefault := "is not the hub's choice for this add-on: addontemplates.addon.open-cluster-management.io gpu-tmpl (ClusterManagementAddOn gpu spec.supportedConfigs[0].defaultConfig)"
	want := map[string]outcome{
		"the default template":                       {Template: "gpu-tmpl", Roles: []string{"gpu-reader"}},
		"forged: another template of the add-on":     {Refused: fmt.Sprintf(notAllowed, "wide-tmpl", byDefault)},
		"forged: another add-on's template":          {Refused: fmt.Sprintf(notAllowed, "other-tmpl", byDefault)},
		"named by the add-on, for another add-on":    {Refused: `AddOnTemplate other-tmpl is for add-on "other" (its spec.addonName), not for gpu: the hub deploys an add-on only from a template for it; name a template whose spec.addonName is "gpu" in ClusterManagementAddOn gpu or in ManagedClusterAddOn spoke-1/gpu spec.configs`},
		"no ClusterManagementAddOn":                  {Refused: fmt.Sprintf(notAllowed, "gpu-tmpl", "no ClusterManagementAddOn gpu names (there is none)")},
		"rollout: the placement's desired":           {Template: "gpu-tmpl", Roles: []string{"gpu-reader"}},
		"rollout: last applied to its placement":     {Template: "wide-tmpl", Roles: []string{"gpu-admin"}},
		"last applied to a placement not serving it": {Refused: fmt.Sprintf(notAllowed, "wide-tmpl", byDefault)},
	}
	got := map[string]outcome{}
	for name, tc := range trustCases {
		mca := forgedAddOn(tc.Status)
		c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(append(tc.objects(), mca)...).
			WithStatusSubresource(mca, &clusterv1beta1.PlacementDecision{}).Build()
		tc.decisions(t, c)
		r := &Reconciler{Client: c, Clock: clocktesting.NewFakePassiveClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))}
		if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(mca)}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var o outcome
		w := &workv1.ManifestWork{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "spoke-1", Name: WorkName("gpu")}, w); err == nil {
			o.Template = w.Labels[TemplateLabel]
		}
		bs := &rbacv1.RoleBindingList{}
		if err := c.List(context.Background(), bs); err != nil {
			t.Fatal(err)
		}
		for _, b := range bs.Items {
			o.Roles = append(o.Roles, b.RoleRef.Name)
		}
		slices.Sort(o.Roles)
		m := &addonv1alpha1.ManagedClusterAddOn{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(mca), m); err != nil {
			t.Fatal(err)
		}
		if cond := meta.FindStatusCondition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnManifestApplied); cond != nil && cond.Reason == ReasonConfigurationNotAllowed {
			o.Refused = cond.Message
		}
		got[name] = o
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
